"""Performance measures of a simulation study, each with its Monte Carlo standard error (MCSE).

Definitions and MCSE formulas follow Morris, White & Crowther (2019), "Using simulation studies
to evaluate statistical methods", *Statistics in Medicine* 38:2074-2102, Table 6 (the same
definitions as the R packages rsimsum and SimDesign). With R replicates, estimates
``est_i``, truth ``theta``, total variances ``V_i`` and mean ``est_bar``:

==================== ========================================= ===================================
metric               value                                     MCSE
==================== ========================================= ===================================
usable_prop          p = mean(usable) over *all* replicates    sqrt(p (1 - p) / R)
bias                 mean(est_i - theta)                       sd(est) / sqrt(R)
rel_bias             bias / scale                              MCSE(bias) / abs(scale)
mse                  mean((est_i - theta)^2)                   sqrt(sum(((est_i-theta)^2 - mse)^2)
                                                               / (R (R - 1)))
rmse                 sqrt(mse)                                 MCSE(mse) / (2 rmse)  (delta method)
scaled_rmse          rmse / abs(scale)                         MCSE(rmse) / abs(scale)
coverage             mean(ci_low <= theta <= ci_high)          sqrt(p (1 - p) / R)
width                mean(ci_high - ci_low), finite CIs only   sd(width) / sqrt(R_width)
scaled_width         width / abs(scale)                        MCSE(width) / abs(scale)
emp_se               sd(est), ddof = 1                         sd_mcse: sqrt((m4 - (R-3)/(R-1) s^4)
                                                               / R) / (2 s)  (see below)
model_se             sqrt(mean(V_i))                           sqrt(var(V) / (4 R model_se^2))
rel_error_model_se   100 (model_se / emp_se - 1)               100 (model_se / emp_se)
                                                               * sqrt(var(V) / (4 R model_se^4)
                                                               + 1 / (2 (R - 1)))
==================== ========================================= ===================================

MCSE of ``emp_se``: Morris et al. give emp_se / sqrt(2 (R - 1)), which holds for normal
estimates only. The MCSE of a sample SD s depends on the fourth central moment m4 of what it
measures: Var(s²) ≈ (m4 − (R − 3)/(R − 1) s⁴)/R, and by the delta method
MCSE(s) = sqrt(Var(s²)) / (2 s) (:func:`sd_mcse`). For normal estimates (m4 = 3 s⁴) it is
s / sqrt(2R) to first order, Morris et al.'s value; for heavy-tailed ones (Firth fits near
separation, where a few replicates give coefficients of 5–10) the normal formula understates
the MCSE several-fold, and a regression check would flag noise as change.

``scale`` is the truth unless a per-row column is named; a zero or non-finite scale gives NaN.
``width`` is not in Morris et al.; its MCSE is that of a sample mean. ``rel_bias``,
``scaled_rmse`` and ``scaled_width`` are the "relative bias", "scaled RMSE" and "scaled CI width"
of Bowen & Liu (2020) §4.2 (divided by the true σ²). Groups with no usable
replicate give NaN values; an MCSE based on fewer than two replicates is NaN.

Everything is computed with ``np.bincount`` over integer group codes (two-pass means and
variances), so millions of rows in thousands of groups take well under a few seconds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

METRICS: tuple[str, ...] = (
    "usable_prop",
    "bias",
    "rel_bias",
    "mse",
    "rmse",
    "scaled_rmse",
    "coverage",
    "width",
    "scaled_width",
    "emp_se",
    "model_se",
    "rel_error_model_se",
)
"""Metric names, in the order they appear within each group of the long table."""

DEFAULT_BY: tuple[str, ...] = ("scenario", "method", "epsilon", "estimand")
VALUE_COLUMNS: tuple[str, ...] = ("metric", "value", "mcse", "n_rep")
_REQUIRED = ("estimate", "truth", "variance", "ci_low", "ci_high", "usable")


def _moments(x: np.ndarray, codes: np.ndarray, n_groups: int):
    """Per-group count, mean and sample variance (ddof=1) of ``x``, ignoring NaN (two-pass)."""
    ok = ~np.isnan(x)
    c, v = codes[ok], x[ok]
    n = np.bincount(c, minlength=n_groups).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(c, weights=v, minlength=n_groups) / n
        ss = np.bincount(c, weights=(v - mean[c]) ** 2, minlength=n_groups)
        var = np.where(n >= 2, ss / (n - 1), np.nan)
    return n, mean, var


def sd_mcse(n, var, m4, constant: float = 0.0) -> np.ndarray:
    """Monte Carlo SE of a sample SD sqrt(var) over n values with fourth central moment m4
    (no normality assumed; see the module docstring). NaN for fewer than two values.
    ``constant`` is returned where every value was equal (var = 0): 0 for an estimate that is
    deterministic; NaN (unknown) for a rare 0/1 flag that simply never fired."""
    n, var, m4 = (np.asarray(a, dtype=float) for a in (n, var, m4))
    with np.errstate(invalid="ignore", divide="ignore"):
        var_of_var = np.maximum(m4 - (n - 3) / (n - 1) * var * var, 0.0) / n
        out = np.sqrt(var_of_var) / (2 * np.sqrt(var))
        out = np.where(var == 0, constant, out)
    return np.where(n >= 2, out, np.nan)


def performance_metrics(
    rows: pd.DataFrame,
    by: Sequence[str] = DEFAULT_BY,
    discard_unusable: bool = True,
    scale: str | None = None,
    carry: Sequence[str] = ("log_epsilon", "truth"),
) -> pd.DataFrame:
    """Performance metrics with MCSEs (Morris et al. 2019, Table 6) as a tidy long table.

    Parameters
    ----------
    rows
        One row per replicate (long format) with columns ``estimate``, ``truth``, ``variance``
        (total variance T), ``ci_low``, ``ci_high`` (NaN when undefined), ``usable`` and the
        ``by``/``carry`` columns.
    by
        Grouping columns; NaN keys (e.g. ``epsilon`` of non-private baselines) form their own
        groups.
    discard_unusable
        If True, every metric except ``usable_prop`` uses only replicates with ``usable=True``.
        If False all replicates are used and an unusable replicate's CI counts as non-covering.
    scale
        Column giving the scale of ``rel_bias``, ``scaled_rmse`` and ``scaled_width`` (group mean
        of the column);
        default: ``truth``.
    carry
        Columns constant within groups copied to the output (first row of each group).

    Returns
    -------
    DataFrame with the ``by`` and ``carry`` columns, then ``metric`` (see :data:`METRICS`),
    ``value``, ``mcse`` and ``n_rep`` (replicates behind that metric), group-major.
    Replicates with a non-finite estimate (variance, CI) are left out of the metrics that use it.
    """
    by = list(by)
    carry = [c for c in carry if c not in by]
    scale_col = "truth" if scale is None else scale
    missing = [c for c in (*by, *carry, *_REQUIRED, scale_col) if c not in rows.columns]
    if missing:
        raise KeyError(f"rows lacks columns {sorted(set(missing))}")

    n_rows = len(rows)
    grouped = rows.groupby(by, dropna=False, sort=True, observed=True)
    codes = grouped.ngroup().to_numpy(dtype=np.intp)
    g = int(grouped.ngroups)
    first = np.zeros(g, dtype=np.intp)
    first[codes[::-1]] = np.arange(n_rows, dtype=np.intp)[::-1]
    keys = rows[by + carry].iloc[first].reset_index(drop=True)

    def col(name: str) -> np.ndarray:
        return rows[name].to_numpy(dtype=float, na_value=np.nan)

    est, truth, var_t = col("estimate"), col("truth"), col("variance")
    lo, hi = col("ci_low"), col("ci_high")
    usable = rows["usable"].fillna(False).to_numpy(dtype=bool)
    incl = usable if discard_unusable else np.ones(n_rows, dtype=bool)

    def masked(x: np.ndarray, keep: np.ndarray) -> np.ndarray:
        return np.where(keep, x, np.nan)

    ok_est = incl & np.isfinite(est) & np.isfinite(truth)
    e = masked(est, ok_est)
    d = e - truth
    n_all, p_usable, _ = _moments(usable.astype(float), codes, g)
    n_e, bias, var_e = _moments(d, codes, g)
    _, mean_est, var_est = _moments(e, codes, g)
    with np.errstate(invalid="ignore"):
        _, m4_est, _ = _moments((e - mean_est[codes]) ** 4, codes, g)
    _, mse, var_d2 = _moments(d * d, codes, g)
    covered = usable & (lo <= truth) & (truth <= hi)
    n_c, cover, _ = _moments(masked(covered.astype(float), incl), codes, g)
    n_w, width, var_w = _moments(
        masked(hi - lo, incl & np.isfinite(lo) & np.isfinite(hi)), codes, g
    )
    n_v, mean_v, var_v = _moments(masked(var_t, incl & np.isfinite(var_t)), codes, g)
    _, s, _ = _moments(masked(col(scale_col), np.isfinite(col(scale_col))), codes, g)

    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(s == 0, np.nan, s)
        emp_se = np.sqrt(var_est)
        rmse = np.sqrt(mse)
        model_se = np.sqrt(mean_v)
        ratio = model_se / emp_se
        se_bias = emp_se / np.sqrt(n_e)
        se_mse = np.sqrt(var_d2 / n_e)
        se_rmse = se_mse / (2 * rmse)
        table = {  # metric: (value, mcse, n_rep)
            "usable_prop": (p_usable, np.sqrt(p_usable * (1 - p_usable) / n_all), n_all),
            "bias": (bias, se_bias, n_e),
            "rel_bias": (bias / s, se_bias / np.abs(s), n_e),
            "mse": (mse, se_mse, n_e),
            "rmse": (rmse, se_rmse, n_e),
            "scaled_rmse": (rmse / np.abs(s), se_rmse / np.abs(s), n_e),
            "coverage": (cover, np.sqrt(cover * (1 - cover) / n_c), n_c),
            "width": (width, np.sqrt(var_w / n_w), n_w),
            "scaled_width": (width / np.abs(s), np.sqrt(var_w / n_w) / np.abs(s), n_w),
            "emp_se": (emp_se, sd_mcse(n_e, var_est, m4_est), n_e),
            "model_se": (model_se, np.sqrt(var_v / (4 * n_v * mean_v)), n_v),
            "rel_error_model_se": (
                100 * (ratio - 1),
                100 * ratio * np.sqrt(var_v / (4 * n_v * mean_v**2) + 1 / (2 * (n_e - 1))),
                np.minimum(n_v, n_e),
            ),
        }
    value = np.column_stack([table[m][0] for m in METRICS])
    mcse = np.column_stack([table[m][1] for m in METRICS])
    n_rep = np.column_stack([table[m][2] for m in METRICS])
    value[n_rep == 0] = np.nan
    mcse[n_rep < 2] = np.nan

    out = keys.iloc[np.repeat(np.arange(g), len(METRICS))].reset_index(drop=True)
    out["metric"] = np.tile(np.array(METRICS, dtype=object), g)
    out["value"] = value.ravel()
    out["mcse"] = mcse.ravel()
    out["n_rep"] = n_rep.ravel().astype(np.int64)
    return out


def wide(metrics_df: pd.DataFrame, values: str = "value") -> pd.DataFrame:
    """Pivot the long table of :func:`performance_metrics` to one column per metric.

    All columns other than ``metric``, ``value``, ``mcse`` and ``n_rep`` identify a row (NaN
    keys are kept). With ``values="value"`` each metric column is followed by ``<metric>_mcse``
    (when the table has ``mcse``); any other ``values`` column is pivoted on its own.
    """
    id_cols = [c for c in metrics_df.columns if c not in VALUE_COLUMNS]
    n = len(metrics_df)
    if id_cols:
        grouped = metrics_df.groupby(id_cols, dropna=False, sort=False, observed=True)
        rcode = grouped.ngroup().to_numpy(dtype=np.intp)
        n_groups = int(grouped.ngroups)
    else:
        rcode, n_groups = np.zeros(n, dtype=np.intp), int(n > 0)
    mcode, names = pd.factorize(metrics_df["metric"])
    if len(np.unique(rcode * len(names) + mcode)) != n:
        raise ValueError("duplicate (row keys, metric) pairs; cannot pivot")
    first = np.zeros(n_groups, dtype=np.intp)
    first[rcode[::-1]] = np.arange(n, dtype=np.intp)[::-1]
    out = metrics_df[id_cols].iloc[first].reset_index(drop=True)

    fields = [(values, "")]
    if values == "value" and "mcse" in metrics_df.columns:
        fields.append(("mcse", "_mcse"))
    columns = {}
    for j, name in enumerate(names):
        for field, suffix in fields:
            grid = np.full(n_groups, np.nan)
            sel = mcode == j
            grid[rcode[sel]] = metrics_df[field].to_numpy(dtype=float)[sel]
            columns[f"{name}{suffix}"] = grid
    return pd.concat([out, pd.DataFrame(columns)], axis=1)
