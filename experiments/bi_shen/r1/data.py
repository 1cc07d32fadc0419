"""The UC salary data of Bi & Shen's R1 benchmark (2010 University of California employee pay;
spec 004 §4 R1): a calibrated stand-in, and a loader for the real file when a user has it.

The real data (N = 252,540; mean $39,531.49, SD $53,253.93, 90 % quantile $95,968.12, maximum
"exceeding two million dollars", paper §4) are not shipped: the harness has no network and no
package ships them. Facts marked [paper] are the paper's; everything else here is an assumption
of the stand-in, labelled [assumption] (spec §4 R1 "Stand-in [ours, calibrated]")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy import stats

from harness.datafiles import read_table
from harness.errors import ConfigError

#: [paper] the full data's size and moments (paper §4; spec §4 R1)
N_RECORDS = 252_540
PAPER_MEAN = 39_531.49
PAPER_SD = 53_253.93
PAPER_Q90 = 95_968.12

#: the column a user's CSV must hold (and nothing else)
COLUMN = "salary"


def standin_salaries(c: float, d: float, scale: float, n: int, seed: int,
                     maximum: float) -> np.ndarray:
    """The stand-in (n,) salaries: n draws of Burr XII(c, d, scale) [assumption: a right-skewed
    family; its three parameters are calibrated so that the population mean, SD and 90 % quantile
    equal the paper's three numbers] from ``numpy.random.default_rng(seed)``, with the sample
    maximum replaced by ``maximum`` [assumption: the paper says only "exceeding two million
    dollars"; 2,300,000 puts LRM's expected relative error at about 13.1 %, the paper's 13.08 %].
    One fixed data set, like the paper's: the replicates of R1 differ in their hold-out splits
    and noise, not in the data."""
    rng = np.random.default_rng(seed)
    z = stats.burr12(c, d, scale=scale).rvs(size=n, random_state=rng)
    z[np.argmax(z)] = maximum
    return z


def load_salary_csv(path: str | Path, key: str = "study.data_csv") -> np.ndarray:
    """The (N,) salaries of a user's CSV with exactly one column, ``salary``: finite numbers
    >= 0, no empty cells, at least 10 rows. Anything else (a missing or unknown column, a bad
    value, an unreadable file) is a one-line ConfigError naming ``key``; nothing is written."""
    import pandas as pd

    frame = read_table(path, key, dtype=str, keep_default_na=False, skip_blank_lines=False)
    unknown = [c for c in frame.columns if c != COLUMN]
    if unknown:
        raise ConfigError(f"{key}: unknown column {unknown[0]!r} in {path} (allowed: {COLUMN})")
    if COLUMN not in frame.columns:
        raise ConfigError(f"{key}: {path} has no column {COLUMN!r}")
    text = frame[COLUMN].str.strip()
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ConfigError(f"{key}: row {i + 1} of {path} has salary {text.iloc[i]!r} (allowed: "
                          f"a finite number >= 0)")
    if values.size < 10:
        raise ConfigError(f"{key}: {path} has {values.size} salaries (allowed: at least 10)")
    return values
