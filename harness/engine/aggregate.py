"""Aggregation of a sweep's rows into the tidy metrics table that figures, claims, tables and
regression checks read (DESIGN §4)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from ..metrics import performance_metrics, sd_mcse, wide
from .grid import plan_tasks
from .store import SweepStore, atomic_write_csv, atomic_write_parquet, atomic_write_text
from .study import load_study
from .sweep import aggregation_version, code_version, study_module, sweep_dir

METRICS_FILE = "metrics.parquet"
DIGEST_FILE = "metrics.tasks"  # digest of the task files the metrics were aggregated from


def _tasks(config: dict):
    return plan_tasks(load_study(config["study"]), config, code_version(study_module(config)))


def _tasks_digest(config: dict) -> str:
    """Identifies the stored task files (names, sizes, modification times) that the metrics are
    computed from, and the code that aggregates them: a task file rewritten since (a damaged
    task run again) or edited aggregation code changes it."""
    inputs = SweepStore(sweep_dir(config)).digest_inputs(_tasks(config))
    version = aggregation_version(study_module(config))
    return hashlib.sha256((version + inputs).encode()).hexdigest()[:16]


def read_rows(config: dict) -> pd.DataFrame:
    """All rows of the sweep's current tasks, in task order (deterministic)."""
    return SweepStore(sweep_dir(config)).read_tasks(_tasks(config))


def aggregate(config: dict, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Metrics by (scenario, method, privacy value, m, estimand); writes metrics.parquet and
    metrics.csv."""
    study = load_study(config["study"])
    digest = _tasks_digest(config)
    if rows is None:
        rows = read_rows(config)
    axes = list(study.grid_axes())
    if rows.empty:  # a study without interval estimands (only per-replicate metrics)
        metrics = pd.DataFrame(columns=["scenario", *axes, "method", "privacy", "m", "epsilon",
                                        "log_epsilon", "estimand", "truth", "metric", "value",
                                        "mcse", "n_rep"])
    else:
        metrics = performance_metrics(
            rows,
            by=["scenario", "method", "privacy", "m", "epsilon", "estimand"],
            discard_unusable=bool(config["study"].get("discard_unusable", True)),
            carry=[*axes, "log_epsilon", "truth"],
        )
    extra = summarise_replicate_metrics(config, long=True)
    if not extra.empty:
        metrics = extra if metrics.empty else pd.concat([metrics, extra], ignore_index=True)
    order = {m: i for i, m in enumerate(config["study"]["roster"])}
    metrics = metrics.sort_values(
        [*axes, "method", "privacy", "m", "estimand", "metric"],
        key=lambda s: s.map(order) if s.name == "method" else s,
        kind="stable",
    ).reset_index(drop=True)
    root = sweep_dir(config)
    atomic_write_parquet(metrics, root / METRICS_FILE)
    atomic_write_csv(wide(metrics), root / "metrics.csv")
    atomic_write_text(digest, root / DIGEST_FILE)
    return metrics


def load_metrics(config: dict) -> pd.DataFrame:
    """The stored metrics if they were aggregated from exactly this config's tasks; otherwise
    aggregate afresh (a changed roster, grid or code must never reuse stale metrics)."""
    root = Path(sweep_dir(config))
    digest = root / DIGEST_FILE
    if digest.exists() and digest.read_text() == _tasks_digest(config):
        return pd.read_parquet(root / METRICS_FILE)
    return aggregate(config)


def read_diagnostics(config: dict) -> pd.DataFrame:
    """All per-replicate diagnostic rows of the sweep's current tasks (empty if none)."""
    return SweepStore(sweep_dir(config)).read_diagnostics(_tasks(config))


def read_replicate_metrics(config: dict) -> pd.DataFrame:
    """All per-replicate metric rows (``Study.replicate_metrics``) of the sweep (empty if none)."""
    return SweepStore(sweep_dir(config)).read_metrics(_tasks(config))


def summarise_replicate_metrics(config: dict, long: bool = False) -> pd.DataFrame:
    """Mean, SD and Monte Carlo SE (SD/√R) of every per-replicate metric by (scenario, method,
    ε, metric) (DESIGN §4), written to replicate_metrics.csv. With ``long=True`` the result is in
    the tidy format of the metrics table (``metric``, ``value``, ``mcse``, ``n_rep``; estimand
    ""): each metric gives a row with its mean and a row ``<metric>_sd`` with its SD (MCSE from
    the fourth central moment, :func:`harness.metrics.sd_mcse`: a 0/1 flag's SD is far noisier
    than a normal variable's), so claims read them like every other metric."""
    study = load_study(config["study"])
    rows = read_replicate_metrics(config)
    if rows.empty:
        return rows
    axes = list(study.grid_axes())
    keys = ["scenario", *axes, "method", "privacy", "m", "epsilon", "log_epsilon", "metric"]
    g = rows.groupby(keys, dropna=False, sort=False)["value"]
    out = g.agg(mean="mean", sd="std", n_rep="size").reset_index()
    out["mcse"] = out["sd"] / np.sqrt(out["n_rep"])
    centred = rows["value"] - g.transform("mean")
    m4 = rows.assign(c4=centred**4).groupby(keys, dropna=False, sort=False)["c4"].mean()
    # a metric constant over the replicates is often a rare 0/1 flag that never fired: the MC
    # error of its SD is then unknown (NaN: harness check does not judge it), not 0
    sd_se = sd_mcse(out["n_rep"], out["sd"] ** 2, m4.to_numpy(), constant=np.nan)
    if not long:
        atomic_write_csv(out.drop(columns="scenario"), sweep_dir(config) / "replicate_metrics.csv")
        return out
    mean = out.assign(value=out["mean"])
    sd = out.assign(metric=out["metric"] + "_sd", value=out["sd"], mcse=sd_se)
    both = pd.concat([mean, sd], ignore_index=True).assign(estimand="", truth=np.nan)
    return both[["scenario", *axes, "method", "privacy", "m", "epsilon", "log_epsilon",
                 "estimand", "truth", "metric", "value", "mcse", "n_rep"]]


def summarise_diagnostics(config: dict) -> pd.DataFrame:
    """Mean, SD and Monte Carlo SE of every diagnostic by (scenario, method, ε, diagnostic);
    written to diagnostics.csv (empty when no method reports diagnostics)."""
    study = load_study(config["study"])
    diag = SweepStore(sweep_dir(config)).read_diagnostics(_tasks(config))
    if diag.empty:
        return diag
    keys = [*study.grid_axes(), "method", "privacy", "m", "epsilon", "log_epsilon",
            "diagnostic"]
    g = diag.groupby(keys, dropna=False, sort=True)["value"]
    out = g.agg(mean="mean", sd="std", n_rep="size").reset_index()
    out["mcse"] = out["sd"] / np.sqrt(out["n_rep"])
    atomic_write_csv(out, sweep_dir(config) / "diagnostics.csv")
    return out
