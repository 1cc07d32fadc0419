"""The bank-marketing data of Bi & Shen's R2 benchmark (Moro, Cortez & Rita 2014, UCI "Bank
Marketing", ``bank-additional-full.csv``; spec 004 §4 R2): a stand-in, and a loader for the real
file when a user has it.

[paper] 30,488 complete respondents of a 2008–2013 phone campaign; the response is whether the
client subscribed to a term deposit; 9 explanatory variables become the 10 covariate columns
below (Table 3, "dimension 10"). The real file is not shipped (no network; no package ships
it). The stand-in's marginals and coefficients are [assumption]s: the spec's approximation of the
public data from memory, not numbers of the paper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from harness.datafiles import read_table
from harness.errors import ConfigError

#: the 11 released columns, in order: 10 covariates (Table 3's dimension 10), then the response
COLUMNS = ("age", "employed", "single", "divorced", "education", "default", "housing", "loan",
           "landline", "campaign", "y")
#: [paper] the number of complete respondents
N_RECORDS = 30_488
#: [assumption] the stand-in's base rate of subscriptions (the spec's 0.1266; KL(0.1266‖0.5) =
#: 0.313 is LRM's expected loss once its rounded response is noise, paper 0.311)
BASE_RATE = 0.1266
#: [assumption] the stand-in's logistic coefficients (spec §4 R2), in COLUMNS order (no y)
COEFFICIENTS = (0.01, -0.7, 0.25, 0.05, 0.06, 0.0, 0.0, -0.1, -1.0, -0.08)
EDUCATION_P = (0.0004, 0.074, 0.049, 0.139, 0.140, 0.253, 0.3446)  # codes 0..6 [assumption]

# --- the real file (UCI bank-additional-full.csv, sep=";") ------------------------------------
#: every column of the UCI file; the loader refuses any other
UCI_COLUMNS = ("age", "job", "marital", "education", "default", "housing", "loan", "contact",
               "month", "day_of_week", "duration", "campaign", "pdays", "previous", "poutcome",
               "emp.var.rate", "cons.price.idx", "cons.conf.idx", "euribor3m", "nr.employed", "y")
USED = ("age", "job", "marital", "education", "default", "housing", "loan", "contact",
        "campaign", "y")
NOT_EMPLOYED = ("unemployed", "retired", "student", "housemaid")  # [paper] employment "no"
JOBS = ("admin.", "blue-collar", "entrepreneur", "management", "self-employed", "services",
        "technician", *NOT_EMPLOYED)
MARITAL = ("married", "single", "divorced")
EDUCATION = ("illiterate", "basic.4y", "basic.6y", "basic.9y", "professional.course",
             "high.school", "university.degree")  # [paper] coded 0..6 in this order
YES_NO = ("no", "yes")
CONTACT = ("cellular", "telephone")  # landline = telephone


def standin_bank(seed: int, n: int = N_RECORDS) -> np.ndarray:
    """(n, 11) stand-in records in :data:`COLUMNS` order from ``default_rng(seed)`` (spec §4 R2,
    every line an [assumption]): age = clip(round(Gamma(14, 39/14)), 17, 95); employed ~
    Bern(0.89); marital married/single/divorced .57/.31/.12; education on codes 0..6 by
    :data:`EDUCATION_P`; default 1 for exactly 3 records; housing ~ Bern(.53), loan ~
    Bern(.155), landline ~ Bern(.33); campaign = min(1 + NegBin(size 1.2, mean 1.52), 43); y
    logistic in the covariates with :data:`COEFFICIENTS` and the intercept solved so that the
    mean probability is :data:`BASE_RATE`."""
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(rng.gamma(14.0, 39.0 / 14.0, n)), 17, 95)
    employed = rng.random(n) < 0.89
    marital = rng.choice(3, size=n, p=(0.57, 0.31, 0.12))
    education = rng.choice(7, size=n, p=EDUCATION_P)
    default = np.zeros(n)
    default[rng.choice(n, 3, replace=False)] = 1
    housing, loan, landline = (rng.random((3, n)) < np.array([[0.53], [0.155], [0.33]]))
    campaign = np.minimum(1 + rng.negative_binomial(1.2, 1.2 / (1.2 + 1.52), n), 43)
    x = np.column_stack([age, employed, marital == 1, marital == 2, education, default,
                         housing, loan, landline, campaign]).astype(float)
    eta = x @ np.asarray(COEFFICIENTS)
    b0 = brentq(lambda b: expit(b + eta).mean() - BASE_RATE, -30, 30)
    y = (rng.random(n) < expit(b0 + eta)).astype(float)
    return np.column_stack([x, y])


def _levels(key, path, frame, column, levels):
    text = frame[column]
    bad = ~text.isin(levels)
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise ConfigError(f"{key}: row {frame.index[i] + 1} of {path} has {column} "
                          f"{text.iloc[i]!r} (allowed: {', '.join(levels)}, or unknown)")
    return text


def _counts(key, path, frame, column, low):
    text = frame[column].str.strip()
    ok = text.str.fullmatch(r"\d+")
    values = np.where(ok, text.where(ok, "0"), "0").astype(np.int64)
    bad = ~ok.to_numpy() | (values < low)
    if bad.any():
        i = int(np.argmax(bad))
        raise ConfigError(f"{key}: row {frame.index[i] + 1} of {path} has {column} "
                          f"{text.iloc[i]!r} (allowed: an integer >= {low})")
    return values.astype(float)


def load_bank_csv(path: str | Path, key: str = "study.data_csv") -> np.ndarray:
    """(N, 11) records in :data:`COLUMNS` order of the UCI file ``bank-additional-full.csv``
    (``sep=";"``; any subset of its 21 columns that holds the 10 used ones): rows with
    "unknown" in any column are dropped (41,188 → 30,488 rows in the UCI file [spec]), then
    employed = job not in unemployed/retired/student/housemaid, single and divorced dummies
    (married the reference), education coded 0..6, default/housing/loan yes = 1, landline =
    telephone contact, campaign, y yes = 1 (paper §4). A missing or unknown column, a level
    outside the file's own, a non-integer age or campaign, or fewer than 20 complete rows is
    a one-line ConfigError naming ``key``; nothing is written."""

    frame = read_table(path, key, sep=";", dtype=str, keep_default_na=False,
                       skip_blank_lines=False)
    unknown = [c for c in frame.columns if c not in UCI_COLUMNS]
    if unknown:
        raise ConfigError(f"{key}: unknown column {unknown[0]!r} in {path} (allowed: the UCI "
                          f"bank-additional columns, sep=';')")
    missing = [c for c in USED if c not in frame.columns]
    if missing:
        raise ConfigError(f"{key}: {path} has no column {missing[0]!r} (needed: "
                          f"{', '.join(USED)})")
    frame = frame[~(frame == "unknown").any(axis=1)]
    if len(frame) < 20:
        raise ConfigError(f"{key}: {path} has {len(frame)} complete rows (allowed: at least 20)")
    job = _levels(key, path, frame, "job", JOBS)
    marital = _levels(key, path, frame, "marital", MARITAL)
    education = _levels(key, path, frame, "education", EDUCATION)
    yes = {c: _levels(key, path, frame, c, YES_NO) == "yes"
           for c in ("default", "housing", "loan", "y")}
    contact = _levels(key, path, frame, "contact", CONTACT)
    cols = [_counts(key, path, frame, "age", 0), ~job.isin(NOT_EMPLOYED),
            marital == "single", marital == "divorced",
            education.map({e: k for k, e in enumerate(EDUCATION)}), yes["default"],
            yes["housing"], yes["loan"], contact == "telephone",
            _counts(key, path, frame, "campaign", 1), yes["y"]]
    return np.column_stack([np.asarray(c, dtype=float) for c in cols])
