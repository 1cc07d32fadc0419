"""The resumable result store (DESIGN §6): one parquet file per task, written atomically
(temporary file in the same directory, then ``os.replace``), so a killed sweep never leaves a
half-written task file and a re-run skips every task whose file exists."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pandas as pd

from ..errors import IncompleteSweep
from .grid import Task

TMP_PREFIX = ".tmp-"
_UMASK = os.umask(0)
os.umask(_UMASK)


class SweepStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.tasks_dir = self.root / "tasks"
        self.diagnostics_dir = self.root / "diagnostics"
        self.metrics_dir = self.root / "replicate_metrics"
        self.failures_path = self.root / "failures.jsonl"

    def task_path(self, task: Task) -> Path:
        return self.tasks_dir / f"{task.file_id}.parquet"

    def is_done(self, task: Task) -> bool:
        return self.task_path(task).exists()

    def diagnostics_path(self, task: Task) -> Path:
        return self.diagnostics_dir / f"{task.file_id}.parquet"

    def metrics_path(self, task: Task) -> Path:
        return self.metrics_dir / f"{task.file_id}.parquet"

    def write_task(self, task: Task, rows: pd.DataFrame, diagnostics: pd.DataFrame,
                   metrics: pd.DataFrame | None = None) -> None:
        """Diagnostics and per-replicate metrics first, rows last: a task counts as done once
        its rows file exists."""
        if not diagnostics.empty:
            atomic_write_parquet(diagnostics, self.diagnostics_path(task))
        if metrics is not None and not metrics.empty:
            atomic_write_parquet(metrics, self.metrics_path(task))
        atomic_write_parquet(rows, self.task_path(task))

    def read_diagnostics(self, tasks: list[Task]) -> pd.DataFrame:
        frames = [pd.read_parquet(p) for t in tasks if (p := self.diagnostics_path(t)).exists()]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def read_metrics(self, tasks: list[Task]) -> pd.DataFrame:
        frames = [pd.read_parquet(p) for t in tasks if (p := self.metrics_path(t)).exists()]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def read_tasks(self, tasks: list[Task]) -> pd.DataFrame:
        missing = [t.key for t in tasks if not self.is_done(t)]
        if missing:
            raise IncompleteSweep(
                f"{len(missing)} of {len(tasks)} tasks of this sweep have no results yet "
                f"(first: {missing[0]}); run it first with the same overrides"
            )
        frames = [pd.read_parquet(self.task_path(t)) for t in tasks]
        return pd.concat(frames, ignore_index=True)

    def write_json(self, name: str, obj) -> None:
        atomic_write_text(json.dumps(obj, indent=2, default=str), self.root / name)

    def log_failure(self, record: dict) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.failures_path, "a") as fh:
            fh.write(json.dumps(record) + "\n")

    def remove_stale_temporaries(self) -> int:
        """Delete temporary files left by a killed run (never read: names start with '.')."""
        stale = list(self.tasks_dir.glob(f"{TMP_PREFIX}*")) if self.tasks_dir.exists() else []
        for p in stale:
            p.unlink(missing_ok=True)
        return len(stale)

    def clear_failures(self) -> None:
        self.failures_path.unlink(missing_ok=True)


def _atomic(path: Path, write) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=path.suffix, dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600 files; use the usual umask instead
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_parquet(df: pd.DataFrame, path: Path) -> None:
    _atomic(path, lambda tmp: df.to_parquet(tmp, index=False))


def atomic_write_text(text: str, path: Path) -> None:
    _atomic(path, lambda tmp: Path(tmp).write_text(text))


def atomic_write_csv(df: pd.DataFrame, path: Path) -> None:
    _atomic(path, lambda tmp: df.to_csv(tmp, index=False))
