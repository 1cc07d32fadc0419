"""A user's CSV of the real 2017 SDR public-use sample (Hu, Savitsky & Williams §3; spec 002 §7.1,
A20): the study's ``data: csv`` reads it instead of the stand-in.

The file holds one row per respondent (already subset to the employed aged 40–44) with four
columns, named by ``csv_columns`` (default: the names below; the PUF's own names, e.g. SALARY,
GENDER, WTSURVY and a field-of-doctorate group, are not given by the paper, so they are mapped
by the user):

* ``field``: field of study (the strata), integers 1..8;
* ``gender``: Male/Female (or M/F, any case);
* ``salary``: a finite number > 0 (the models take log y);
* ``weight``: the survey weight w = 1/π, a finite number ≥ 1 (an inclusion probability ≤ 1).

Design checks: every field stratum has at least 2 respondents (linearised variances and
half-samples need 2), the row count equals ``expected_n`` and the weights sum to
``expected_weight_total`` within ``weight_total_tolerance`` (relative), when these are given.
Any failure is one ConfigError line naming the column (or key) and what is allowed; the loader
is called while the config is validated, so nothing is written for a bad file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.data import RecordBatch
from harness.datafiles import data_path, read_table
from harness.errors import ConfigError

from ..population import FIELDS, GENDERS, SCHEMA

COLUMNS = ("field", "gender", "salary", "weight")
GENDER_CODES = {"male": 0, "m": 0, "female": 1, "f": 1}


def _line(i: int) -> int:
    """The file line of data row i (line 1 is the header)."""
    return int(i) + 2


def _numbers(frame: pd.DataFrame, column: str, label: str, rule: str) -> np.ndarray:
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        i = bad[0]
        shown = "missing" if pd.isna(raw.iloc[i]) or str(raw.iloc[i]).strip() == "" \
            else f"{raw.iloc[i]!r}, not a number"
        raise ConfigError(f"{label}: line {_line(i)} is {shown} (allowed: {rule})")
    return values


def load_sdr_csv(path, columns: dict | None = None, *, expected_n: int | None = None,
                 expected_weight_total: float | None = None,
                 weight_total_tolerance: float = 0.005) -> RecordBatch:
    """The CSV at ``path`` as a RecordBatch (1, n, 3) of (field, gender, salary) codes, weights
    and strata = field, in the layout of the stand-in sample; one-line ConfigErrors otherwise."""
    names = {c: c for c in COLUMNS}
    unknown = set(columns or {}) - set(COLUMNS)
    if unknown:
        raise ConfigError(f"study.csv_columns: {sorted(unknown)[0]!r} is not allowed (allowed: "
                          f"{', '.join(COLUMNS)})")
    names.update(columns or {})
    file = data_path(path, "study.csv_path")
    frame = read_table(file, "study.csv_path", dtype=str, keep_default_na=False,
                       na_values=[""])
    for key in COLUMNS:
        if names[key] not in frame.columns:
            raise ConfigError(f"study.csv_path: {file} has no column {names[key]!r} (required "
                              f"columns: {', '.join(names[c] for c in COLUMNS)})")
    label = {k: f"column {names[k]}" for k in COLUMNS}

    field = _numbers(frame, names["field"], label["field"], "integers 1..8")
    bad = np.flatnonzero(~np.isin(field, FIELDS))
    if bad.size:
        raise ConfigError(f"{label['field']}: line {_line(bad[0])} is "
                          f"{frame[names['field']].iloc[bad[0]]!r} (allowed: integers 1..8)")
    gender_raw = frame[names["gender"]].fillna("").str.strip().str.lower()
    gender = gender_raw.map(GENDER_CODES)
    bad = np.flatnonzero(gender.isna().to_numpy())
    if bad.size:
        raise ConfigError(f"{label['gender']}: line {_line(bad[0])} is "
                          f"{frame[names['gender']].iloc[bad[0]]!r} (allowed: "
                          f"{', '.join(GENDERS)}, M, F)")
    salary = _numbers(frame, names["salary"], label["salary"], "finite numbers > 0")
    bad = np.flatnonzero(salary <= 0)
    if bad.size:
        raise ConfigError(f"{label['salary']}: line {_line(bad[0])} is {salary[bad[0]]:g} "
                          f"(allowed: finite numbers > 0)")
    rule = "finite numbers >= 1, w = 1/π with inclusion probability π <= 1"
    weight = _numbers(frame, names["weight"], label["weight"], rule)
    bad = np.flatnonzero(weight < 1)
    if bad.size:
        raise ConfigError(f"{label['weight']}: line {_line(bad[0])} is {weight[bad[0]]:g} "
                          f"(allowed: {rule})")

    codes = field.astype(np.int64) - 1
    n_h = np.bincount(codes, minlength=len(FIELDS))
    if (n_h < 2).any():
        h = int(np.flatnonzero(n_h < 2)[0])
        raise ConfigError(f"{label['field']}: field {h + 1} has {n_h[h]} respondent(s) (allowed: "
                          f"at least 2 per field stratum, for the design variances)")
    if expected_n is not None and len(frame) != int(expected_n):
        raise ConfigError(f"study.expected_n: {file.name} has {len(frame)} rows, the SDR "
                          f"subset has {int(expected_n)} (set study.expected_n=null to skip)")
    if expected_weight_total is not None:
        total, want = float(weight.sum()), float(expected_weight_total)
        if abs(total - want) > weight_total_tolerance * want:
            raise ConfigError(f"{label['weight']}: the weights sum to {total:.6g}, the design's "
                              f"total is {want:.6g} (allowed: within "
                              f"{100 * weight_total_tolerance:g}%; study.expected_weight_total)")
    values = np.stack([codes, gender.to_numpy(dtype=float), salary], axis=-1)[None].astype(float)
    return RecordBatch(values, None, 1, SCHEMA.names, weight[None], codes[None], SCHEMA)
