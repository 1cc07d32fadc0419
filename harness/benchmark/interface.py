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
  integer columns are then rounded;
* the cell of mixed data (``RecordBatch.cells``, e.g. GLOM cells): one more categorical column
  ``cell`` (levels 0..n_cells − 1), first;
* strata: one more categorical column ``stratum`` (levels 0..S − 1, S declared), last;
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
                  "epsilon_per_privacy")


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


@dataclass(frozen=True)
class TabularInterface:
    """A study's public discretisation: ``bins`` (numeric column → K), ``bounds`` (numeric
    column → [lower, upper], replacing the schema's bounds for the bins), ``schema`` (for data
    that carry none), ``strata`` (the number of strata S, public) and ``records`` (keep the
    first N records of each released set: a uniform subsample of exchangeable synthetic records,
    for studies whose methods release N records; None: all)."""

    bins: Mapping[str, int] = field(default_factory=dict)
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    schema: Schema | None = None
    strata: int | None = None
    records: int | None = None

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
        for axis, table in (spec.get("bounds_by") or {}).items():
            if scenario is None or axis not in scenario:
                raise ConfigError(f"{key}.bounds_by.{axis}: not a grid axis of the scenario")
            value = str(scenario[axis])
            if value not in {str(k) for k in table}:
                raise ConfigError(f"{key}.bounds_by.{axis}: no bounds for {axis}={value}")
            given.update({k: v for k2, row in table.items() if str(k2) == value
                          for k, v in row.items()})
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
        return cls(bins, bounds, schema, strata, records)

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
        if schema is None:
            raise ConfigError(f"{key}.columns: the study's records carry no schema; declare "
                              f"their columns (levels or public bounds)")
        if len(schema.columns) != data.n_columns or \
                (data.columns is not None and tuple(data.columns) != schema.names):
            raise ConfigError(f"{key}.columns: the schema's columns ({', '.join(schema.names)})"
                              f" are not the records' ({', '.join(data.columns or ())})")
        coded, numeric, lower, upper, bins = [], [], [], [], []
        if data.cells is not None:
            coded.append(Categorical(CELL, tuple(range(data.n_cells))))
        for j, col in enumerate(schema.columns):
            if isinstance(col, Categorical):
                coded.append(col)
                continue
            if col.name not in self.bins:
                raise ConfigError(f"{key}.bins.{col.name}: give the number of bins of numeric "
                                  f"column {col.name!r}")
            lo, hi = self.bounds.get(col.name, (col.lower, col.upper))
            numeric.append(j)
            lower.append(lo)
            upper.append(hi)
            bins.append(self.bins[col.name])
            coded.append(Categorical(col.name, tuple(range(self.bins[col.name]))))
        if data.strata is not None:
            s = self.strata or int(data.strata.max()) + 1
            coded.append(Categorical(STRATUM, tuple(range(s))))
        grid = (BinGrid(np.array([lower]), np.array([upper]), np.array([bins]))
                if numeric else None)
        zeros = schema.structural_zeros
        return Layout("records", Schema(tuple(coded), zeros), schema=schema,
                      numeric=tuple(numeric), grid=grid, has_cells=data.cells is not None,
                      n_cells=data.n_cells, has_strata=data.strata is not None,
                      has_weights=data.weights is not None, columns=data.columns)

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
            else:
                parts.append(values[..., [j]])
        if layout.has_strata:
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
        values[~valid] = np.nan
        cells = np.where(valid, codes[..., 0], -1) if layout.has_cells else None
        strata = np.where(valid, codes[..., -1], -1) if layout.has_strata else None
        weights = None
        if layout.has_weights:
            weights = sets.weights if sets.weights is not None else valid.astype(float)
        return RecordBatch(values, cells, layout.n_cells, layout.columns, weights, strata,
                           layout.schema, sets.sizes)
