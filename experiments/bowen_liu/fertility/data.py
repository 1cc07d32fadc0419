"""The UCI Fertility data (Gil et al. 2012; UCI Machine Learning Repository, CC BY 4.0) used by
the Bowen & Liu (2020) case study (§5, Table 3; spec 000 §4.5 and its REVIEW note).

The file has 100 records, 10 comma-separated columns and no header. Every column is checked
against its codes (spec §4.5 REVIEW): a malformed file fails with one line naming the line, the
column and the allowed values. ``split`` draws the 80/20 train/test split with a seeded,
stratified draw that puts exactly the requested number of "altered" (O) records in the test set
(Table 4: 3 altered and 17 normal test cases).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from harness.datafiles import data_path, read_text
from harness.errors import ConfigError

#: (name, allowed codes in the order of their levels, or (low, high) for a continuous column)
CATEGORICAL = {
    "season": (-1.0, -0.33, 0.33, 1.0),  # winter, spring, summer, fall
    "childish_diseases": (0.0, 1.0),  # yes, no
    "accident": (0.0, 1.0),  # yes, no
    "surgical": (0.0, 1.0),  # yes, no
    "fevers": (-1.0, 0.0, 1.0),  # < 3 months ago, > 3 months ago, no
    "alcohol": (0.2, 0.4, 0.6, 0.8, 1.0),  # several times a day ... hardly ever or never
    "smoking": (-1.0, 0.0, 1.0),  # never, occasional, daily
}
CONTINUOUS = {
    "age": (0.5, 1.0),  # round(years / 36, 2), years 18-36 (Table 3)
    "hours": (0.06, 1.0),  # round(hours / 16, 2), hours 1-16 (Table 3); 1/16 rounds to 0.06
}
#: column order of the file
COLUMNS = (
    "season", "age", "childish_diseases", "accident", "surgical", "fevers", "alcohol",
    "smoking", "hours", "diagnosis",
)
DIAGNOSIS = ("N", "O")  # normal, altered ("+" in Table 4)
FEATURES = COLUMNS[:-1]
#: the 8 categorical variables of Table 5's cross-tabulations, in table order
TABLE_VARIABLES = (*CATEGORICAL, "diagnosis")

DATA_FILE = "fertility_Diagnosis.txt"


def default_path() -> Path:
    """The copy shipped with the package (experiments/bowen_liu/data/)."""
    return Path(str(resources.files("experiments.bowen_liu") / "data" / DATA_FILE))


@dataclass(frozen=True)
class FertilityData:
    """Features (n, 9) in the file's coding, in ``FEATURES`` order, and labels (n,) with
    1 = altered (O) and 0 = normal (N)."""

    features: np.ndarray
    altered: np.ndarray

    @property
    def n(self) -> int:
        return self.features.shape[0]

    def subset(self, index: np.ndarray) -> FertilityData:
        return FertilityData(self.features[index], self.altered[index])

    def codes(self) -> np.ndarray:
        """Level codes (n, 8) of the 8 categorical variables (``TABLE_VARIABLES`` order)."""
        cols = []
        for name, levels in CATEGORICAL.items():
            x = self.features[:, FEATURES.index(name)]
            cols.append(np.argmin(np.abs(x[:, None] - np.asarray(levels)), axis=1))
        cols.append(self.altered.astype(np.int64))
        return np.stack(cols, axis=1)


def _fail(path, line: int, column: int, message: str) -> ConfigError:
    name = COLUMNS[column - 1] if 1 <= column <= len(COLUMNS) else "?"
    return ConfigError(f"{path}: line {line}, column {column} ({name}): {message}")


def _parse(path, line_no: int, column: int, text: str) -> float:
    name = COLUMNS[column - 1]
    if name == "diagnosis":
        if text not in DIAGNOSIS:
            raise _fail(path, line_no, column, f"{text!r} is not allowed (allowed: N, O)")
        return float(DIAGNOSIS.index(text))
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if name in CATEGORICAL:
        levels = CATEGORICAL[name]
        if not any(abs(value - lv) < 1e-9 for lv in levels):
            shown = ", ".join(f"{lv:g}" for lv in levels)
            raise _fail(path, line_no, column, f"{text!r} is not allowed (allowed: {shown})")
        return value
    lo, hi = CONTINUOUS[name]
    if not (lo - 1e-9 <= value <= hi + 1e-9):
        raise _fail(path, line_no, column,
                    f"{text!r} is not allowed (allowed: a number in [{lo:g}, {hi:g}])")
    return value


def load_fertility(path: str | Path | None = None, key: str = "study.data_path") -> FertilityData:
    """Read and validate the Fertility file (None: the shipped copy; a relative path is read from
    the working directory): 10 columns, no header, codes per column as in spec 000 §4.5
    (REVIEW), class labels N/O. Raises a one-line ConfigError naming ``key`` and the file
    otherwise (a missing, empty or binary file: :func:`harness.datafiles.read_text`)."""
    path = data_path(path, key, default_path())
    text = read_text(path, key)
    where = f"{key}: {path}"
    rows = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        fields = [f.strip() for f in raw.split(",")]
        if len(fields) != len(COLUMNS):
            raise ConfigError(
                f"{where}: line {line_no}: {len(fields)} columns, expected {len(COLUMNS)} "
                f"({', '.join(COLUMNS)}; no header)"
            )
        rows.append([_parse(where, line_no, j, f) for j, f in enumerate(fields, start=1)])
    if not rows:
        raise ConfigError(f"{where}: no records")
    arr = np.asarray(rows, dtype=float)
    return FertilityData(arr[:, :-1], arr[:, -1].astype(np.int64))


def split(data: FertilityData, *, n_test: int, n_test_altered: int, seed: int):
    """Seeded stratified train/test split (Bowen & Liu §5: 80 train, 20 test; Table 4's test set
    holds 3 altered and 17 normal cases). Returns (train, test) index arrays, sorted."""
    alt = np.flatnonzero(data.altered == 1)
    norm = np.flatnonzero(data.altered == 0)
    n_test_normal = n_test - n_test_altered
    if not (0 <= n_test_altered <= alt.size and 0 <= n_test_normal <= norm.size):
        raise ConfigError(
            f"study.split: cannot put {n_test_altered} altered and {n_test_normal} normal records "
            f"in the test set (the data hold {alt.size} and {norm.size})"
        )
    rng = np.random.default_rng(seed)
    test = np.sort(np.concatenate([
        rng.choice(alt, n_test_altered, replace=False),
        rng.choice(norm, n_test_normal, replace=False),
    ]))
    train = np.setdiff1d(np.arange(data.n), test)
    return train, test
