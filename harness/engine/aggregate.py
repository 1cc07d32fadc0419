"""Aggregation of a sweep's rows into the tidy metrics table that figures, claims, tables and
regression checks read (DESIGN §4)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..metrics import performance_metrics, wide
from .grid import plan_tasks
from .store import SweepStore, atomic_write_csv, atomic_write_parquet
from .study import load_study
from .sweep import code_version, sweep_dir

METRICS_FILE = "metrics.parquet"


def read_rows(config: dict) -> pd.DataFrame:
    """All rows of the sweep's current tasks, in task order (deterministic)."""
    study = load_study(config["study"])
    tasks = plan_tasks(study, config, code_version())
    return SweepStore(sweep_dir(config)).read_tasks(tasks)


def aggregate(config: dict, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Metrics by (scenario, method, ε, estimand); writes metrics.parquet and metrics.csv."""
    study = load_study(config["study"])
    if rows is None:
        rows = read_rows(config)
    axes = list(study.grid_axes())
    metrics = performance_metrics(
        rows,
        by=["scenario", "method", "epsilon", "estimand"],
        discard_unusable=bool(config["study"].get("discard_unusable", True)),
        carry=[*axes, "log_epsilon", "truth"],
    )
    order = {m: i for i, m in enumerate(config["study"]["roster"])}
    metrics = metrics.sort_values(
        [*axes, "method", "epsilon", "estimand", "metric"],
        key=lambda s: s.map(order) if s.name == "method" else s,
        kind="stable",
    ).reset_index(drop=True)
    root = sweep_dir(config)
    atomic_write_parquet(metrics, root / METRICS_FILE)
    atomic_write_csv(wide(metrics), root / "metrics.csv")
    return metrics


def load_metrics(config: dict) -> pd.DataFrame:
    path = Path(sweep_dir(config)) / METRICS_FILE
    if not path.exists():
        return aggregate(config)
    return pd.read_parquet(path)
