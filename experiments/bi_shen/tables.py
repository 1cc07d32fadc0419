"""Helpers shared by the Bi & Shen tables and claims: one metric of the aggregated metrics
table (long form: ``metric``, ``value``, ``mcse``) and Monte Carlo errors of means and ratios."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.claims import MissingInput


def cells(metrics: pd.DataFrame, metric: str, index: list[str],
          sd_mcse: bool = False, realised: bool = False) -> pd.DataFrame:
    """The ``metric`` rows as a frame indexed by ``index`` + ``method`` + ``epsilon`` (NaN ε for
    the non-private NP, repeated on every ε of the run) with columns value, mcse, sd (the SD
    across replicates) and, when ``sd_mcse``, the SD's Monte Carlo SE.

    ``epsilon`` is the study's swept value (the rows' ``privacy``), which is the realised ε of
    every method but EXM in the paper's calibration (its swept ε is the ε of each of n draws,
    :mod:`.exm`); ``realised`` adds the realised ε of the release as ``realised_epsilon``."""
    m = metrics[metrics["metric"] == metric]
    s = metrics[metrics["metric"] == f"{metric}_sd"]
    keys = [*index, "method", "privacy"]
    sd_cols = {"value": "sd", **({"mcse": "sd_mcse"} if sd_mcse else {})}
    extra = ["epsilon"] if realised else []
    out = m[keys + ["value", "mcse", *extra]].merge(
        s[keys + list(sd_cols)].rename(columns=sd_cols), on=keys, how="left")
    out = out.rename(columns={"epsilon": "realised_epsilon", "privacy": "epsilon"})
    eps = sorted(e for e in out["epsilon"].dropna().unique())
    np_rows = out[out["epsilon"].isna()]
    # with no private method in the run, NP keeps its NaN ε
    rep = pd.concat([np_rows.assign(epsilon=e) for e in eps]) if len(np_rows) and eps else np_rows
    return pd.concat([out[out["epsilon"].notna()], rep], ignore_index=True)


#: roster labels of DIP at a hold-out share: DIP_<percent> (S3, R1–R3)
DIP_LABEL = r"^DIP_(\d+)$"


def split_dip_labels(c: pd.DataFrame) -> pd.DataFrame:
    """``c`` with the roster's DIP_15/DIP_25/DIP_35 as method DIP and holdout 0.15/0.25/0.35
    (NaN for the methods that do not split off a hold-out)."""
    c = c.copy()
    share = c["method"].str.extract(DIP_LABEL)[0].astype(float) / 100
    c["holdout"] = share
    c.loc[share.notna(), "method"] = "DIP"
    return c


def pooled_mean(values: pd.Series, ses: pd.Series) -> tuple[float, float]:
    """Mean of independent cell estimates and its MCSE sqrt(Σ se²)/k."""
    return float(values.mean()), float(np.sqrt((ses ** 2).sum()) / len(ses))


def ratio_se(a, b, sa, sb):
    """Delta-method MCSE of a/b for independent a and b."""
    return np.abs(a / b) * np.sqrt((sa / a) ** 2 + (sb / b) ** 2)


def tidy(frame: pd.DataFrame, digits: int = 5) -> pd.DataFrame:
    """Every float column rounded to ``digits`` significant digits (for the report's tables)."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype.kind == "f":
            v = out[col].to_numpy(dtype=float)
            with np.errstate(divide="ignore", invalid="ignore"):
                mag = np.where(np.isfinite(v) & (v != 0),
                               np.floor(np.log10(np.abs(np.where(v == 0, 1, v)))), 0)
            scale = 10.0 ** (digits - 1 - mag)
            out[col] = np.where(np.isfinite(v), np.round(v * scale) / scale, v)
    return out


def dip_cells(metrics: pd.DataFrame, metric: str, keys: list[str]) -> pd.DataFrame:
    """Mean, MCSE, SD (and its MCSE) of ``metric`` per (keys, method, holdout, ε), with
    DIP_15/25/35 read as method DIP at holdout 0.15/0.25/0.35 (the benchmarks' rosters)."""
    return split_dip_labels(cells(metrics, metric, keys, sd_mcse=True))


def ranked_grid(o: pd.DataFrame, keys: list[str], rank: dict[str, int],
                extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """Every cell of :func:`dip_cells` output in report order (keys, method rank, hold-out, ε),
    as columns ours, ours_sd, mcse and ``extra``."""
    o = o.assign(_r=o["method"].map(rank), _h=o["holdout"].fillna(0)).sort_values(
        [*keys, "_r", "_h", "epsilon"])
    return o[[*keys, "method", "holdout", "epsilon", "value", "sd", "mcse", *extra]].rename(
        columns={"value": "ours", "sd": "ours_sd"}).reset_index(drop=True)


def pick(o: pd.DataFrame, method: str, eps: float, holdout: float | None = None, *,
         cols: dict[str, np.ndarray] | None = None) -> pd.Series:
    """The one cell of ``method`` at ε (and hold-out share, for DIP); :class:`MissingInput`
    when the run holds none (the method did not run: its table or claim says "not run").
    ``cols``: :func:`columns` of ``o``, read once by a caller that picks several cells."""
    sel = where(columns(o) if cols is None else cols, method, eps, holdout)
    if not sel.any():
        share = "" if holdout is None else f" {holdout:.0%}"
        raise MissingInput(f"{method}{share} at ε = {eps:g}")
    return o.iloc[np.flatnonzero(sel)[0]]


def columns(o: pd.DataFrame) -> dict[str, np.ndarray]:
    """The columns of ``o`` as arrays, for :func:`where` (read once per frame by a table that
    picks many cells: a pandas comparison per cell and key was most of its time)."""
    return {c: o[c].to_numpy() for c in o.columns}


def where(cols: dict[str, np.ndarray], method: str, eps: float, holdout: float | None = None,
          **at) -> np.ndarray:
    """The rows of :func:`columns` ``cols`` of ``method`` at ε, the hold-out share (NaN for
    ``None``) and the values ``at`` of other keys, as a boolean mask."""
    sel = (cols["method"] == method) & (cols["epsilon"] == eps)
    for key, value in at.items():
        sel &= cols[key] == value
    return sel & (pd.isna(cols["holdout"]) if holdout is None
                  else np.isclose(cols["holdout"], holdout))
