"""Typed schemas of data sets: each column is categorical (its levels, in order) or
numeric (public bounds, integer or real), and a schema may list structural zeros (combinations
of categorical levels that cannot occur). Synthesizers, evaluations and metrics read levels and
bounds from the schema, never from constants; data that do not fit it are a one-line error
naming the column and what is allowed.

A schema is built from a plain mapping, as a study config gives it::

    columns:
      - {name: stratum, levels: [north, south, east]}
      - {name: y, levels: [low, mid, high]}
      - {name: income, bounds: [0, 250000], integer: true}
    structural_zeros:
      - {stratum: east, y: high}

Columns are a list because their order is part of the schema (it fixes the cells of the
cross-table); a mapping of name to column is accepted too and read in sorted name order, since
configs reach worker processes with their keys sorted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import ConfigError, plain


@dataclass(frozen=True)
class Categorical:
    name: str
    levels: tuple

    @property
    def kind(self) -> str:
        return "categorical"


@dataclass(frozen=True)
class Numeric:
    name: str
    lower: float
    upper: float
    integer: bool = False

    @property
    def kind(self) -> str:
        return "numeric"


@dataclass(frozen=True)
class Schema:
    columns: tuple[Categorical | Numeric, ...]
    structural_zeros: tuple[Mapping[str, object], ...] = field(default_factory=tuple)

    def __post_init__(self):
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ConfigError(f"schema.columns: column names repeat ({', '.join(names)})")

    # --- construction ------------------------------------------------------------------------
    @classmethod
    def from_config(cls, spec: Mapping, key: str = "schema") -> Schema:
        """A schema from ``{columns: {name: {levels: [...]} | {bounds: [lo, hi], integer:
        bool}}, structural_zeros: [{column: level, ...}]}``; every mistake is one line naming
        its key."""
        given = spec.get("columns") if isinstance(spec, Mapping) else None
        if isinstance(given, Mapping):
            given = [{"name": k, **(v if isinstance(v, Mapping) else {})}
                     for k, v in sorted(given.items())]
        if not isinstance(given, list) or not given or \
                not all(isinstance(c, Mapping) and c.get("name") for c in given):
            raise ConfigError(f"{key}.columns: give a list of columns, each {{name: ..., "
                              f"levels: [...]}} or {{name: ..., bounds: [lower, upper]}}")
        columns = []
        for col in given:
            name = col["name"]
            ckey = f"{key}.columns.{name}"
            if ("levels" in col) == ("bounds" in col):
                raise ConfigError(f"{ckey}: give exactly one of levels: [...] (categorical) or "
                                  f"bounds: [lower, upper] (numeric)")
            if "levels" in col:
                levels = tuple(col["levels"])
                if not levels or len(set(levels)) != len(levels):
                    raise ConfigError(f"{ckey}.levels: give distinct levels, got {list(levels)}")
                columns.append(Categorical(str(name), levels))
            else:
                b = col["bounds"]
                ok = (isinstance(b, Sequence) and len(b) == 2
                      and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                              and math.isfinite(x) for x in b) and b[0] < b[1])
                if not ok:
                    raise ConfigError(f"{ckey}.bounds: give [lower, upper] with finite "
                                      f"lower < upper, got {b!r}")
                columns.append(Numeric(str(name), float(b[0]), float(b[1]),
                                       bool(col.get("integer", False))))
        schema = cls(tuple(columns))
        zeros = tuple(spec.get("structural_zeros") or ())
        for i, zero in enumerate(zeros):
            zkey = f"{key}.structural_zeros[{i}]"
            if not isinstance(zero, Mapping) or not zero:
                raise ConfigError(f"{zkey}: give a mapping of categorical column to level")
            for name, level in zero.items():
                schema._check_level(f"{zkey}.{name}", name, level)
        return cls(tuple(columns), tuple(dict(z) for z in zeros))

    # --- reading -----------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Categorical | Numeric:
        for c in self.columns:
            if c.name == name:
                return c
        raise ConfigError(f"schema: no column {name!r} (allowed: {', '.join(self.names)})")

    @property
    def categorical(self) -> tuple[Categorical, ...]:
        return tuple(c for c in self.columns if isinstance(c, Categorical))

    def _check_level(self, key: str, name: str, level) -> int:
        col = self.column(name)
        if not isinstance(col, Categorical):
            raise ConfigError(f"{key}: column {name!r} is numeric; structural zeros and codes "
                              f"are for categorical columns")
        if level not in col.levels:
            raise ConfigError(f"{key}: level {level!r} is not one of {name}'s levels "
                              f"(allowed: {', '.join(map(str, col.levels))})")
        return col.levels.index(level)

    def cell_shape(self) -> tuple[int, ...]:
        """Levels per categorical column, in schema order: the shape of the full cross-table."""
        return tuple(len(c.levels) for c in self.categorical)

    def structural_zero_mask(self) -> np.ndarray:
        """Boolean array of :meth:`cell_shape`: True where a cell is a structural zero."""
        cats = [c.name for c in self.categorical]
        mask = np.zeros(self.cell_shape(), dtype=bool)
        for zero in self.structural_zeros:
            index = tuple(
                self._check_level("structural_zeros", c, zero[c]) if c in zero else slice(None)
                for c in cats
            )
            mask[index] = True
        return mask

    # --- data --------------------------------------------------------------------------------
    def encode(self, frame, key: str = "data") -> np.ndarray:
        """The records of a DataFrame as an (n, p) float array in schema column order
        (categorical columns as level codes 0..L−1), or a one-line ConfigError naming the first
        column with a missing value, a level outside its list, a value outside its bounds, a
        non-integer value of an integer column, or a record in a structural zero."""
        missing = [c for c in self.names if c not in frame.columns]
        if missing:
            raise ConfigError(f"{key}: no column {missing[0]!r} (the schema's columns: "
                              f"{', '.join(self.names)})")
        out = np.empty((len(frame), len(self.columns)))
        for j, col in enumerate(self.columns):
            values = frame[col.name].to_numpy()
            ckey = f"{key}.{col.name}"
            if isinstance(col, Categorical):
                index = {lv: k for k, lv in enumerate(col.levels)}
                codes = [index.get(v, -1) for v in values.tolist()]
                bad = [v for v, c in zip(values.tolist(), codes, strict=True) if c < 0]
                if bad:
                    raise ConfigError(f"{ckey}: level {bad[0]!r} is not in the schema "
                                      f"(allowed: {', '.join(map(str, col.levels))})")
                out[:, j] = codes
                continue
            try:
                v = values.astype(float)
            except (TypeError, ValueError):
                raise ConfigError(f"{ckey}: values must be numbers") from None
            if np.isnan(v).any():
                raise ConfigError(f"{ckey}: record {int(np.flatnonzero(np.isnan(v))[0])} has a "
                                  f"missing value")
            outside = (v < col.lower) | (v > col.upper)
            if outside.any():
                raise ConfigError(f"{ckey}: {plain(v[outside][0])!r} lies outside the public "
                                  f"bounds [{col.lower:g}, {col.upper:g}]")
            if col.integer and (v != np.round(v)).any():
                raise ConfigError(f"{ckey}: {plain(v[v != np.round(v)][0])!r} is not an integer")
            out[:, j] = v
        if self.structural_zeros:
            cats = [self.names.index(c.name) for c in self.categorical]
            hit = self.structural_zero_mask()[tuple(out[:, cats].astype(int).T)]
            if hit.any():
                row = int(np.flatnonzero(hit)[0])
                cell = {c.name: c.levels[int(out[row, i])]
                        for c, i in zip(self.categorical, cats, strict=True)}
                raise ConfigError(f"{key}: record {row} lies in a structural zero {cell}")
        return out

    def decode(self, codes: np.ndarray):
        """The inverse of :meth:`encode` for one data set (n, p): a DataFrame with levels."""
        import pandas as pd

        frame = {}
        for j, col in enumerate(self.columns):
            if isinstance(col, Categorical):
                frame[col.name] = np.asarray(col.levels, dtype=object)[codes[:, j].astype(int)]
            else:
                frame[col.name] = codes[:, j]
        return pd.DataFrame(frame)


def load_csv(path, schema: Schema, *, weight: str | None = None, key: str = "data"):
    """Records of a CSV file checked against ``schema``: (codes (n, p) in schema column order,
    weights (n,) or None). Every problem is one line naming ``key``: a file that is missing,
    empty, binary, not CSV or without data rows (:func:`harness.datafiles.read_table`), and the
    file's column with a level outside its list, a value outside its bounds or not finite, a
    missing value, a weight that is missing, negative or not finite, or weights that sum to 0."""
    import pandas as pd

    from .data import check_weights
    from .datafiles import read_table

    frame = read_table(path, key, keep_default_na=True)
    codes = schema.encode(frame, key)
    if weight is None:
        return codes, None
    if weight not in frame.columns:
        raise ConfigError(f"{key}: no weight column {weight!r} (columns: "
                          f"{', '.join(map(str, frame.columns))})")
    values = pd.to_numeric(frame[weight], errors="coerce").to_numpy(dtype=float)
    weights = check_weights(f"{key}.{weight}", values)
    if not weights.sum() > 0:
        raise ConfigError(f"{key}.{weight}: the weights of {path} sum to 0 (allowed: weights "
                          f">= 0 with a positive total)")
    return codes, weights
