"""The paper's regression-utility models (Park & Ghosh §4.3, Figs. 7 and 8; spec 001 E4)::

    logistic:  I(charge > 25K)    ~ as.numeric(age.yrs) + sev + cat + as.numeric(los)
    linear:    as.numeric(charge) ~ as.numeric(age.yrs) + sev + cat + as.numeric(los)

Coding (spec E4 [RES]): as.numeric(·) is the ordinal bin index 1..K; sev is a factor with
baseline 0 (dummies sev1, sev2), cat a factor with baseline Medical (catS); rows with an NA
level in any model variable are dropped (complete cases); I(charge > 25K) is 1 when the bin's
lower edge is >= 25K. Coefficients are (Intercept, age, sev1, sev2, catS, los), fitted by plain
unpenalised OLS and logistic maximum likelihood (IRLS).
"""

from __future__ import annotations

import numpy as np

from .data import CHARGE_EDGES_K, COL, LEVELS

COEFFICIENTS = ("(Intercept)", "age", "sev1", "sev2", "catS", "los")


def design(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X (n', 6) with the intercept column, charge index 1..24 (n',), I(charge > 25K) (n',))
    of the complete cases of ``codes`` (n, 13)."""
    codes = np.asarray(codes, dtype=np.int64)
    age, los, charge = codes[:, COL["age.yrs"]], codes[:, COL["los"]], codes[:, COL["charge"]]
    sev, cat = codes[:, COL["sev"]], codes[:, COL["cat"]]
    ok = ((age < len(LEVELS["age.yrs"]) - 1) & (los < len(LEVELS["los"]) - 1)
          & (charge < len(LEVELS["charge"]) - 1))
    age, los, charge, sev, cat = (a[ok] for a in (age, los, charge, sev, cat))
    x = np.column_stack([np.ones(age.size), age + 1.0, sev == 1, sev == 2, cat == 1, los + 1.0])
    high = np.asarray(CHARGE_EDGES_K)[charge] >= 25
    return x.astype(float), charge + 1.0, high.astype(float)


def ols(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OLS coefficients and their t statistics (classical standard errors)."""
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    sigma2 = resid @ resid / (x.shape[0] - x.shape[1])
    se = np.sqrt(np.diag(np.linalg.pinv(x.T @ x)) * sigma2)
    return beta, beta / se


def logistic(x: np.ndarray, y: np.ndarray, max_iter: int = 50,
             tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Logistic MLE by IRLS (Newton): coefficients and Wald z statistics. Diverging fits
    (separation) stop at ``max_iter`` with large coefficients."""
    beta = np.zeros(x.shape[1])
    info = np.eye(x.shape[1])
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        w = p * (1 - p)
        info = (x * w[:, None]).T @ x
        step = np.linalg.lstsq(info, x.T @ (y - p), rcond=None)[0]
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            break
    se = np.sqrt(np.diag(np.linalg.pinv(info)))
    return beta, beta / se


def fig7_coefficients(codes: np.ndarray) -> dict[str, np.ndarray]:
    """{"linear": β (6,), "logistic": β (6,)} of a data set's codes (n, 13)."""
    x, charge, high = design(codes)
    return {"linear": ols(x, charge)[0], "logistic": logistic(x, high)[0]}
