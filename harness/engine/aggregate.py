"""Aggregation of a sweep's rows into the tidy metrics table that figures, claims, tables and
regression checks read."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from ..metrics import performance_metrics, sd_mcse, wide
from .store import (
    DamagedResults,
    SweepStore,
    atomic_write_csv,
    atomic_write_parquet,
    atomic_write_text,
)
from .study import load_study
from .sweep import aggregation_version, study_module, sweep_dir, sweep_roster, sweep_tasks

METRICS_FILE = "metrics.parquet"
#: the privacy keys of every row (``harness.engine.task.privacy_keys``), carried into the
#: aggregates when the rows have them (rows stored before they existed do not)
PRIVACY_KEYS = ("relation", "delta")
DIGEST_FILE = "metrics.tasks"  # digest of the task files the metrics were aggregated from


def _tasks(config: dict):
    """The tasks the sweep's outputs read: this config's, and every other method's the sweep
    directory holds in full for a scenario (:func:`~harness.engine.sweep.sweep_tasks`)."""
    return sweep_tasks(config)


def _tasks_digest(config: dict) -> str:
    """Identifies the stored task files (names, sizes, modification times) that the metrics are
    computed from, and the code that aggregates them: a task file rewritten since (a damaged
    task run again) or edited aggregation code changes it."""
    inputs = SweepStore(sweep_dir(config)).digest_inputs(_tasks(config))
    version = aggregation_version(study_module(config))
    return hashlib.sha256((version + inputs).encode()).hexdigest()[:16]


def read_rows(config: dict) -> pd.DataFrame:
    """All rows of the sweep's current tasks (:func:`_tasks`), in task order (deterministic)."""
    return SweepStore(sweep_dir(config)).read_tasks(_tasks(config))


def aggregate(config: dict, rows: pd.DataFrame | None = None,
              stream: MetricsStream | None = None) -> pd.DataFrame:
    """Metrics by (scenario, method, privacy value, m, estimand); writes metrics.parquet and
    metrics.csv. ``stream`` holds the metrics of the (scenario, method) pairs already aggregated
    while the sweep ran (:class:`MetricsStream`); only the others' rows are read here."""
    study = load_study(config["study"])
    digest = _tasks_digest(config)
    axes = list(study.grid_axes())
    if rows is not None or stream is None:
        pieces = [_interval_metrics(study, config, read_rows(config) if rows is None else rows)]
    else:
        pieces = stream.finish()
    pieces = [p for p in pieces if not p.empty]
    metrics = (pd.concat(pieces, ignore_index=True) if pieces else pd.DataFrame(
        columns=["scenario", *axes, "method", "privacy", "m", "epsilon", "log_epsilon",
                 "estimand", "truth", "metric", "value", "mcse", "n_rep"]))
    extra = summarise_replicate_metrics(config, long=True)
    if not extra.empty:
        metrics = extra if metrics.empty else pd.concat([metrics, extra], ignore_index=True)
    order = {m: i for i, m in enumerate(sweep_roster(config))}
    # the sort keys identify a row: its order never depends on the order of the pieces
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


def _interval_metrics(study, config: dict, rows: pd.DataFrame) -> pd.DataFrame:
    """The performance metrics of interval rows (empty for a study of metric evaluations only).
    Every metric is a sum over its own group's rows, in row order (``performance_metrics``), so
    the rows of some groups give exactly the numbers those groups have among all rows."""
    if rows.empty:
        return pd.DataFrame()
    return performance_metrics(
        rows,
        by=["scenario", "method", "privacy", "m", "epsilon", "estimand"],
        discard_unusable=bool(config["study"].get("discard_unusable", True)),
        carry=[*study.grid_axes(), "log_epsilon", "truth",
               *(c for c in PRIVACY_KEYS if c in rows.columns)],
    )


class MetricsStream:
    """Aggregation while the sweep runs (issue "one contract", item 9): the sweep's own process
    mostly waits for its workers, so each (scenario, method) is read and aggregated as soon as
    the last of its tasks is stored, and after the sweep only the sort and the writing remain.

    The metrics are identical, bit for bit, to aggregating every row at once: each metric group
    lies within one (scenario, method), its rows are read in the same task order, and the final
    sort is on keys that identify a row. Pairs not completed during this run (tasks done by an
    earlier run, or a pair whose read failed) are read and aggregated by :meth:`finish`; a
    damaged file found here was moved aside (store.py) and is reported there, so that
    ``run_and_read`` runs its task again exactly as when reading after the sweep."""

    def __init__(self, config: dict):
        self.config = config
        self.study = load_study(config["study"])
        self.store = SweepStore(sweep_dir(config))
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new attempt of ``run_and_read``), and plan the tasks again: a
        damaged file of a method this run does not run was moved aside, so its scenario is no
        longer held in full."""
        self._tasks: dict[tuple, list] = {}
        for task in _tasks(self.config):
            self._tasks.setdefault((task.scenario, task.method), []).append(task)
        self._pair = {t.key: pair for pair, ts in self._tasks.items() for t in ts}
        self._waiting = {pair: {t.key for t in ts} for pair, ts in self._tasks.items()}
        self._metrics: dict[tuple, pd.DataFrame] = {}
        self._damaged: DamagedResults | None = None

    def stored(self, key: str) -> None:
        """Task ``key`` has been stored by this run."""
        pair = self._pair.get(key)
        if pair is None:
            return
        waiting = self._waiting[pair]
        waiting.discard(key)
        if waiting:
            return
        try:
            rows = self.store.read_tasks(self._tasks[pair])
        except DamagedResults as exc:  # its file is moved aside: reported by finish()
            self._damaged = self._damaged or exc
            return
        self._metrics[pair] = _interval_metrics(self.study, self.config, rows)

    def finish(self) -> list[pd.DataFrame]:
        """The metrics of every (scenario, method): those aggregated during the sweep, and the
        others from their rows read now."""
        if self._damaged is not None:
            raise self._damaged
        rest = [t for pair, ts in self._tasks.items() if pair not in self._metrics for t in ts]
        pieces = list(self._metrics.values())
        if rest:
            pieces.append(_interval_metrics(self.study, self.config, self.store.read_tasks(rest)))
        return pieces


def load_metrics(config: dict, stream: MetricsStream | None = None) -> pd.DataFrame:
    """The stored metrics if they were aggregated from exactly this config's tasks; otherwise
    aggregate afresh (a changed roster, grid or code must never reuse stale metrics), with what
    ``stream`` aggregated during the sweep."""
    root = Path(sweep_dir(config))
    digest = root / DIGEST_FILE
    if digest.exists() and digest.read_text() == _tasks_digest(config):
        return pd.read_parquet(root / METRICS_FILE)
    return aggregate(config, stream=stream)


def read_diagnostics(config: dict) -> pd.DataFrame:
    """All per-replicate diagnostic rows of the sweep's current tasks (empty if none)."""
    return SweepStore(sweep_dir(config)).read_diagnostics(_tasks(config))


def read_replicate_metrics(config: dict) -> pd.DataFrame:
    """All per-replicate metric rows (``Study.replicate_metrics``) of the sweep (empty if none)."""
    return SweepStore(sweep_dir(config)).read_metrics(_tasks(config))


def summarise_replicate_metrics(config: dict, long: bool = False) -> pd.DataFrame:
    """Mean, SD and Monte Carlo SE (SD/√R) of every per-replicate metric by (scenario, method,
    ε, metric), written to replicate_metrics.csv. With ``long=True`` the result is in
    the tidy format of the metrics table (``metric``, ``value``, ``mcse``, ``n_rep``; estimand
    ""): each metric gives a row with its mean and a row ``<metric>_sd`` with its SD (MCSE from
    the fourth central moment, :func:`harness.metrics.sd_mcse`: a 0/1 flag's SD is far noisier
    than a normal variable's), so claims read them like every other metric."""
    study = load_study(config["study"])
    rows = read_replicate_metrics(config)
    if rows.empty:
        return rows
    axes = list(study.grid_axes())
    privacy = [c for c in PRIVACY_KEYS if c in rows.columns]
    keys = ["scenario", *axes, "method", "privacy", "m", "epsilon", "log_epsilon", *privacy,
            "metric"]
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
                 *privacy, "estimand", "truth", "metric", "value", "mcse", "n_rep"]]


def summarise_diagnostics(config: dict) -> pd.DataFrame:
    """Mean, SD and Monte Carlo SE of every diagnostic by (scenario, method, ε, diagnostic);
    written to diagnostics.csv (empty when no method reports diagnostics)."""
    study = load_study(config["study"])
    diag = SweepStore(sweep_dir(config)).read_diagnostics(_tasks(config))
    if diag.empty:
        return diag
    keys = [*study.grid_axes(), "method", "privacy", "m", "epsilon", "log_epsilon",
            *(c for c in PRIVACY_KEYS if c in diag.columns), "diagnostic"]
    g = diag.groupby(keys, dropna=False, sort=True)["value"]
    out = g.agg(mean="mean", sd="std", n_rep="size").reset_index()
    out["mcse"] = out["sd"] / np.sqrt(out["n_rep"])
    atomic_write_csv(out, sweep_dir(config) / "diagnostics.csv")
    return out
