"""One data interface for every study (issue 24 item 2; DESIGN §8 "The benchmark").

A study's original data are handed to a generic tabular synthesizer as *coded records*: a
:class:`RecordBatch` of integer codes (R, n, p) under an all-categorical :class:`Schema`, the
input of the harness's coded-records synthesizers (``input_kind = "coded"``: PrivBayes, MST,
AIM, ...). The encoding is public and fixed before the data are seen:

* categorical columns: their level codes, with their levels (and structural zeros);
* numeric columns: the bin of each value under a public discretisation the study declares,
  K equal-width bins over the column's public bounds (the schema's, or narrower ones the study
  declares; values outside fall in the edge bins); decoding draws a point uniform within the
  released bin, as NP-DIPS does (Bowen & Liu 2020 §3.1.2; :class:`harness.histograms.BinGrid`);
  integer columns are then rounded. ``bins``/``bounds`` key ``*``: every numeric column not
  named (with ``bounds: {"*": [lo, hi]}`` and records without a schema, every column is numeric
  within those bounds, e.g. p Gaussian columns whose p is a grid axis);
* numeric columns on a public finite support (``levels: {column: [v0, v1, ...]}``, e.g.
  ratings on a half-star grid, a variable coded −1/0/1): the index of the nearest level,
  decoded to that level's value (no within-bin draw);
* the cell of mixed data (``RecordBatch.cells``, e.g. GLOM cells): one more categorical column
  ``cell`` (levels 0..n_cells − 1), first; unless the study declares its cells a function of
  the values (``derived_cells: true``, e.g. a histogram cell of the values): then they are not
  coded and the decoded records carry none;
* strata: one more categorical column ``stratum`` (levels 0..S − 1, S declared), last, or, when
  the strata are the codes of one of the schema's categorical columns (``strata_from:
  <column>``), that column (decoded strata = its released codes);
  weights are carried on the coded batch (a method may read or ignore them; synthetic records
  of a method that releases no weights get weight 1, i.e. it ignores the design);
* a :class:`CountBatch` (categorical data held as cell counts, e.g. Bowen & Liu's simulations)
  becomes n records of one categorical column ``cell``, its cell codes.

:meth:`TabularInterface.decode` turns each released set back into the study's own batch type
(counts are re-tabulated; records get their numeric values, cells, strata and weights), so the
study's evaluations run unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..data import CountBatch, RecordBatch
from ..errors import ConfigError
from ..histograms import BinGrid
from ..schema import Categorical, Numeric, Schema
from ..validation import check_number

CELL = "cell"
STRATUM = "stratum"
#: the keys of a study's ``benchmark.interface`` config
INTERFACE_KEYS = ("bins", "bounds", "bounds_by", "columns", "strata", "records",
                  "epsilon_per_privacy", "epsilon_per_privacy_by", "levels", "derived_cells",
                  "strata_from")
#: the key of ``bins`` and ``bounds`` that stands for every numeric column not named
ANY = "*"


def _by_grid(spec: Mapping, name: str, key: str, scenario: Mapping | None,
             what: str = "entry") -> dict:
    """The entries of ``spec[name]`` (``{<grid axis>: {<value>: entry}}``) for the grid values
    of ``scenario``, merged in order; one-line errors."""
    out = {}
    for axis, table in (spec.get(name) or {}).items():
        if scenario is None or axis not in scenario:
            raise ConfigError(f"{key}.{name}.{axis}: not a grid axis of the scenario")
        value = str(scenario[axis])
        rows = [row for k, row in table.items() if str(k) == value]
        if not rows:
            raise ConfigError(f"{key}.{name}.{axis}: no {what} for {axis}={value}")
        out[axis] = rows[0]
    return out


def pop_epsilon_per_privacy(spec: dict, scenario: Mapping | None,
                            key: str = "study.benchmark.interface") -> float:
    """Remove and return the ε one unit of the study's privacy axis stands for:
    ``epsilon_per_privacy`` (default 1), or ``epsilon_per_privacy_by: {<grid axis>: {<value>:
    ε}}`` for a study whose methods' ε per unit depends on the scenario (e.g. a per-record ε
    times the records per stratum, a grid axis)."""
    by = _by_grid(spec, "epsilon_per_privacy_by", key, scenario, "ε")
    spec.pop("epsilon_per_privacy_by", None)
    value = spec.pop("epsilon_per_privacy", 1.0)
    if by and len(by) > 1:
        raise ConfigError(f"{key}.epsilon_per_privacy_by: give one grid axis, got "
                          f"{', '.join(by)}")
    if by:
        value = next(iter(by.values()))
    return float(check_number(f"{key}.epsilon_per_privacy", value,
                              open_interval=(0, float("inf"))))


@dataclass(frozen=True)
class Layout:
    """How one study's train batch was encoded: what :meth:`TabularInterface.decode` needs."""

    kind: str  # "counts" or "records"
    coded_schema: Schema
    levels: tuple = ()  # counts: the cell labels
    schema: Schema | None = None  # records: the study's schema
    numeric: tuple[int, ...] = ()  # records: positions of the numeric columns in ``schema``
    grid: BinGrid | None = None  # records: the bins of the numeric columns (one group)
    has_cells: bool = False
    n_cells: int = 1
    has_strata: bool = False
    has_weights: bool = False
    columns: tuple[str, ...] | None = None
    valued: Mapping[int, tuple[float, ...]] = field(default_factory=dict)  # records: j → levels
    strata_column: int | None = None  # records: the coded column the strata are read from


@dataclass(frozen=True)
class TabularInterface:
    """A study's public discretisation: ``bins`` (numeric column → K), ``bounds`` (numeric
    column → [lower, upper], replacing the schema's bounds for the bins), ``schema`` (for data
    that carry none), ``strata`` (the number of strata S, public) and ``records`` (keep the
    first N records of each released set: a uniform subsample of exchangeable synthetic records,
    for studies whose methods release N records; None: all), ``levels`` (numeric column → its
    public finite support), ``derived_cells`` (the records' cells are a function of their
    values: not coded) and ``strata_from`` (the categorical column the strata are the codes of).
    ``bins`` and ``bounds`` may give a default for every other numeric column under ``*``."""

    bins: Mapping[str, int] = field(default_factory=dict)
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    schema: Schema | None = None
    strata: int | None = None
    records: int | None = None
    levels: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    derived_cells: bool = False
    strata_from: str | None = None

    @classmethod
    def from_config(cls, spec: Mapping | None, key: str = "study.benchmark.interface",
                    schema: Schema | None = None, scenario: Mapping | None = None
                    ) -> TabularInterface:
        """From a config mapping (``bins``, ``bounds``, ``bounds_by``, ``columns``, ``strata``,
        ``records``); ``schema`` (e.g. a study's scenario-dependent schema) wins over
        ``columns``; ``bounds_by: {<grid axis>: {<value>: {column: [lower, upper]}}}`` gives
        bounds per grid value of ``scenario``. One-line errors."""
        spec = dict(spec or {})
        unknown = sorted(set(spec) - set(INTERFACE_KEYS))
        if unknown:
            raise ConfigError(f"{key}.{unknown[0]}: unknown key (allowed: "
                              f"{', '.join(INTERFACE_KEYS)})")
        bins = {}
        for name, k in (spec.get("bins") or {}).items():
            bins[str(name)] = int(check_number(f"{key}.bins.{name}", k, integer=True, minimum=1))
        given = dict(spec.get("bounds") or {})
        for row in _by_grid(spec, "bounds_by", key, scenario, "bounds").values():
            given.update(row)
        bounds = {}
        for name, b in given.items():
            ok = isinstance(b, (list, tuple)) and len(b) == 2 and all(
                isinstance(x, (int, float)) and np.isfinite(x) for x in b) and b[0] < b[1]
            if not ok:
                raise ConfigError(f"{key}.bounds.{name}: give [lower, upper] with finite lower "
                                  f"< upper, got {b!r}")
            bounds[str(name)] = (float(b[0]), float(b[1]))
        if schema is None and spec.get("columns") is not None:
            schema = Schema.from_config({"columns": spec["columns"]}, key=key)
        strata = spec.get("strata")
        if strata is not None:
            strata = int(check_number(f"{key}.strata", strata, integer=True, minimum=1))
        records = spec.get("records")
        if records is not None:
            records = int(check_number(f"{key}.records", records, integer=True, minimum=1))
        levels = {}
        for name, lv in (spec.get("levels") or {}).items():
            ok = isinstance(lv, (list, tuple)) and len(lv) >= 2 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)
                for x in lv) and all(a < b for a, b in zip(lv[:-1], lv[1:], strict=True))
            if not ok:
                raise ConfigError(f"{key}.levels.{name}: give at least two increasing finite "
                                  f"numbers, got {lv!r}")
            levels[str(name)] = tuple(float(x) for x in lv)
        derived = spec.get("derived_cells", False)
        if not isinstance(derived, bool):
            raise ConfigError(f"{key}.derived_cells: give true or false, got {derived!r}")
        strata_from = spec.get("strata_from")
        if strata_from is not None and (strata is not None or not isinstance(strata_from, str)):
            raise ConfigError(f"{key}.strata_from: give one column name, and no strata count "
                              f"(the column's levels are the strata)")
        return cls(bins, bounds, schema, strata, records, levels, derived, strata_from)

    # --- encoding ------------------------------------------------------------------------------
    def layout(self, data) -> Layout:
        """The encoding of ``data`` (a study's train batch); a batch the interface cannot
        encode (no schema, a numeric column without bins) is a one-line error."""
        key = "study.benchmark.interface"
        if isinstance(data, CountBatch):
            if np.ndim(data.n):
                raise ConfigError(f"{key}: counts of sets of different sizes cannot be coded")
            levels = tuple(data.levels)
            return Layout("counts", Schema((Categorical(CELL, tuple(range(len(levels)))),)),
                          levels=levels)
        if not isinstance(data, RecordBatch):
            raise ConfigError(f"{key}: cannot code a {type(data).__name__}")
        schema = self.schema or data.schema
        if schema is None and ANY in self.bounds and data.columns is not None:
            schema = Schema(tuple(Numeric(c, *self.bounds[ANY]) for c in data.columns))
        if schema is None:
            raise ConfigError(f"{key}.columns: the study's records carry no schema; declare "
                              f"their columns (levels or public bounds)")
        if len(schema.columns) != data.n_columns or \
                (data.columns is not None and tuple(data.columns) != schema.names):
            raise ConfigError(f"{key}.columns: the schema's columns ({', '.join(schema.names)})"
                              f" are not the records' ({', '.join(data.columns or ())})")
        coded, numeric, lower, upper, bins, valued = [], [], [], [], [], {}
        has_cells = data.cells is not None and not self.derived_cells
        if has_cells:
            coded.append(Categorical(CELL, tuple(range(data.n_cells))))
        for name in self.levels:
            if name not in schema.names or not isinstance(schema.column(name), Numeric):
                raise ConfigError(f"{key}.levels.{name}: not a numeric column of the records "
                                  f"({', '.join(schema.names)})")
        for j, col in enumerate(schema.columns):
            if isinstance(col, Categorical):
                coded.append(col)
                continue
            if col.name in self.levels:
                valued[j] = self.levels[col.name]
                coded.append(Categorical(col.name, tuple(range(len(valued[j])))))
                continue
            k = self.bins.get(col.name, self.bins.get(ANY))
            if k is None:
                raise ConfigError(f"{key}.bins.{col.name}: give the number of bins of numeric "
                                  f"column {col.name!r}")
            lo, hi = self.bounds.get(col.name, self.bounds.get(ANY, (col.lower, col.upper)))
            numeric.append(j)
            lower.append(lo)
            upper.append(hi)
            bins.append(k)
            coded.append(Categorical(col.name, tuple(range(k))))
        strata_column = None
        if data.strata is not None and self.strata_from is not None:
            if self.strata_from not in schema.names or \
                    not isinstance(schema.column(self.strata_from), Categorical):
                raise ConfigError(f"{key}.strata_from: {self.strata_from!r} is not a "
                                  f"categorical column of the records "
                                  f"({', '.join(schema.names)})")
            strata_column = int(has_cells) + schema.names.index(self.strata_from)
        elif data.strata is not None:
            s = self.strata or int(data.strata.max()) + 1
            coded.append(Categorical(STRATUM, tuple(range(s))))
        grid = (BinGrid(np.array([lower]), np.array([upper]), np.array([bins]))
                if numeric else None)
        zeros = schema.structural_zeros
        return Layout("records", Schema(tuple(coded), zeros), schema=schema,
                      numeric=tuple(numeric), grid=grid, has_cells=has_cells,
                      n_cells=data.n_cells if has_cells else 1,
                      has_strata=data.strata is not None, has_weights=data.weights is not None,
                      columns=data.columns, valued=valued, strata_column=strata_column)

    def encode(self, data, layout: Layout | None = None) -> RecordBatch:
        """The coded records (R, n, p') of ``data``, under ``layout.coded_schema``, carrying
        the weights (and strata) of ``data``. Deterministic: no randomness."""
        layout = layout or self.layout(data)
        schema = layout.coded_schema
        if layout.kind == "counts":
            r, k = data.counts.shape
            counts = np.asarray(data.counts, dtype=np.int64)
            codes = np.repeat(np.tile(np.arange(k), r), counts.ravel()).reshape(r, int(data.n))
            return RecordBatch(codes[..., None].astype(float), columns=schema.names,
                               schema=schema)
        parts = []
        if layout.has_cells:
            parts.append(data.cells[..., None].astype(float))
        values = np.asarray(data.values, dtype=float)
        binned = (layout.grid.locate(values[..., list(layout.numeric)])
                  if layout.numeric else None)
        for j in range(values.shape[-1]):
            if j in layout.numeric:
                parts.append(binned[..., [layout.numeric.index(j)]].astype(float))
            elif j in layout.valued:
                nearest = np.abs(values[..., j, None] - np.asarray(layout.valued[j])).argmin(-1)
                parts.append(nearest[..., None].astype(float))
            else:
                parts.append(values[..., [j]])
        if layout.has_strata and layout.strata_column is None:
            s = len(schema.column(STRATUM).levels)
            if data.strata.max() >= s:
                raise ConfigError(f"study.benchmark.interface.strata: a record has stratum "
                                  f"{int(data.strata.max())}, outside 0..{s - 1}")
            parts.append(data.strata[..., None].astype(float))
        return RecordBatch(np.concatenate(parts, axis=-1), columns=schema.names,
                           weights=data.weights, strata=data.strata, schema=schema)

    # --- decoding ------------------------------------------------------------------------------
    def decode(self, sets: RecordBatch, layout: Layout, rng: np.random.Generator):
        """The study's own batch type from released coded sets (leading axes (R, m)): counts
        re-tabulated, or records with numeric values uniform within their bins (from ``rng``),
        cells, strata and weights (1 when the method released none)."""
        if self.records is not None and self.records < sets.n and sets.sizes is None:
            k = self.records

            def cut(a):
                return None if a is None else a[..., :k]

            sets = RecordBatch(sets.values[..., :k, :], cut(sets.cells), sets.n_cells,
                               sets.columns, cut(sets.weights), cut(sets.strata), sets.schema)
        valid = sets.valid
        codes = np.where(valid[..., None], np.nan_to_num(sets.values), 0).astype(np.int64)
        if layout.kind == "counts":
            k = len(layout.levels)
            lead = codes.shape[:-2]
            flat = codes[..., 0] + np.arange(int(np.prod(lead)), dtype=np.int64).reshape(
                *lead, 1) * k
            counts = np.bincount(flat[valid], minlength=int(np.prod(lead)) * k)
            n = sets.n if sets.sizes is None else np.asarray(sets.sizes)
            return CountBatch(counts.reshape(*lead, k), n, layout.levels)
        offset = int(layout.has_cells)
        p = len(layout.schema.columns)
        values = codes[..., offset:offset + p].astype(float)
        if layout.numeric:
            cols = list(layout.numeric)
            values[..., cols] = layout.grid.uniform_within(codes[..., [offset + j for j in cols]],
                                                           None, rng)
            for j in cols:
                col = layout.schema.columns[j]
                if isinstance(col, Numeric) and col.integer:
                    values[..., j] = np.clip(np.round(values[..., j]), col.lower, col.upper)
        for j, levels in layout.valued.items():
            values[..., j] = np.asarray(levels)[codes[..., offset + j]]
        values[~valid] = np.nan
        cells = np.where(valid, codes[..., 0], -1) if layout.has_cells else None
        strata = None
        if layout.has_strata:
            s = -1 if layout.strata_column is None else layout.strata_column
            strata = np.where(valid, codes[..., s], -1)
        weights = None
        if layout.has_weights:
            weights = sets.weights if sets.weights is not None else valid.astype(float)
        return RecordBatch(values, cells, layout.n_cells, layout.columns, weights, strata,
                           layout.schema, sets.sizes)
