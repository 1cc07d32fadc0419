"""The resumable result store.

A task writes up to three parquet files, each atomically (temporary file in the same directory,
then ``os.replace``): its release diagnostics and per-replicate metrics first, its result rows
last. Every file carries a *stamp* in its parquet footer (the task key, the file id, the table
and its row count), and the rows file's stamp also records the row counts of the task's other
two tables. Pages are written with CRC checksums.

A task is **done** only when its rows file exists, its footer is readable, its stamp names this
task and its row count, and every companion table the stamp records is present with a matching
stamp (:meth:`SweepStore.state`; footers only, so a resume checks thousands of tasks in well
under a second). Anything else is **damaged**: a truncated file (no footer), a file of another
task, a missing or foreign companion. Reading a table verifies the page checksums as well, so a
file damaged in the middle is caught when it is read (:class:`DamagedResults`). A damaged task's
files are moved to ``<sweep>/damaged/`` (never deleted: they are evidence) and the task runs
again.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import ConfigError, IncompleteSweep
from .grid import Task

TMP_PREFIX = ".tmp-"
STAMP_KEY = b"harness.task"
TABLES = ("rows", "diagnostics", "replicate_metrics")
_READ_THREADS = 4
_UMASK = os.umask(0)
os.umask(_UMASK)


class DamagedResults(ConfigError):
    """A stored task file could not be read as written (one line; the file was moved aside and
    re-running the sweep recomputes the task)."""


@dataclass(frozen=True)
class TaskState:
    done: bool
    problem: str = ""  # why a task with files on disk is not done ("" when done or absent)

    @property
    def damaged(self) -> bool:
        return bool(self.problem)


ABSENT = TaskState(False)
DONE = TaskState(True)


class SweepStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.tasks_dir = self.root / "tasks"
        self.diagnostics_dir = self.root / "diagnostics"
        self.metrics_dir = self.root / "replicate_metrics"
        self.damaged_dir = self.root / "damaged"
        self.failures_path = self.root / "failures.jsonl"
        self.timings_path = self.root / "timings.jsonl"

    # --- paths -----------------------------------------------------------------------------
    def path(self, task: Task, table: str = "rows") -> Path:
        folder = {"rows": self.tasks_dir, "diagnostics": self.diagnostics_dir,
                  "replicate_metrics": self.metrics_dir}[table]
        return folder / f"{task.file_id}.parquet"

    def task_path(self, task: Task) -> Path:
        return self.path(task, "rows")

    def diagnostics_path(self, task: Task) -> Path:
        return self.path(task, "diagnostics")

    def metrics_path(self, task: Task) -> Path:
        return self.path(task, "replicate_metrics")

    # --- writing ---------------------------------------------------------------------------
    def write_task(self, task: Task, rows: pd.DataFrame, diagnostics: pd.DataFrame,
                   metrics: pd.DataFrame | None = None) -> None:
        """Companions first, rows last: a task counts as done once its rows file exists with a
        stamp that vouches for the companions."""
        counts = {}
        for table, frame in (("diagnostics", diagnostics), ("replicate_metrics", metrics)):
            if frame is not None and not frame.empty:
                atomic_write_parquet(frame, self.path(task, table), _stamp(task, table, frame))
                counts[table] = len(frame)
        atomic_write_parquet(rows, self.task_path(task),
                             _stamp(task, "rows", rows, companions=counts))

    # --- integrity -------------------------------------------------------------------------
    def state(self, task: Task) -> TaskState:
        """Done, absent, or damaged (with the reason), from the footers alone."""
        path = self.task_path(task)
        if not path.exists():
            return ABSENT
        stamp, problem = _read_stamp(path, task, "rows")
        if problem:
            return TaskState(False, problem)
        for table, count in stamp.get("companions", {}).items():
            if table not in TABLES[1:]:
                return TaskState(False, f"{path.name}: unknown companion table {table!r}")
            _, problem = _read_stamp(self.path(task, table), task, table, count)
            if problem:
                return TaskState(False, problem)
        return DONE

    def is_done(self, task: Task) -> bool:
        return self.state(task).done

    def move_aside(self, task: Task) -> Path:
        """Move every file of a damaged task to ``damaged/`` (kept as evidence); returns the
        folder."""
        target = self.damaged_dir / time.strftime("%Y%m%dT%H%M%S")
        for table in TABLES:
            path = self.path(task, table)
            if path.exists():
                dest = target / table / path.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, dest)
        return target

    # --- reading ---------------------------------------------------------------------------
    def read_tasks(self, tasks: list[Task]) -> pd.DataFrame:
        missing = [t.key for t in tasks if not self.task_path(t).exists()]
        if missing:
            raise IncompleteSweep(
                f"{len(missing)} of {len(tasks)} tasks of this sweep have no results yet "
                f"(first: {missing[0]}); run it first with the same overrides"
            )
        return self._read_all(tasks, "rows")

    def read_diagnostics(self, tasks: list[Task]) -> pd.DataFrame:
        return self._read_optional(tasks, "diagnostics")

    def read_metrics(self, tasks: list[Task]) -> pd.DataFrame:
        return self._read_optional(tasks, "replicate_metrics")

    def _read_optional(self, tasks: list[Task], table: str) -> pd.DataFrame:
        return self._read_all([t for t in tasks if self.path(t, table).exists()], table)

    def _read_all(self, tasks: list[Task], table: str) -> pd.DataFrame:
        """One table of many tasks, in task order: files read and verified on a few threads
        (pyarrow releases the GIL), joined as Arrow tables and converted to pandas once."""
        if not tasks:
            return pd.DataFrame()
        with ThreadPoolExecutor(max_workers=_READ_THREADS) as pool:
            read = list(pool.map(lambda t: self._read_arrow(t, table), tasks))
        for task, (_, problem) in zip(tasks, read, strict=True):
            if problem:
                where = self.move_aside(task)
                raise DamagedResults(
                    f"task {task.key}: {problem}; its files were moved to {where}; re-run the "
                    f"sweep (same overrides) to recompute it"
                )
        # column types may differ between tasks (an all-null column, int vs float): unify them
        # as pandas.concat would
        return pa.concat_tables([arrow for arrow, _ in read],
                                promote_options="permissive").to_pandas()

    def _read_arrow(self, task: Task, table: str) -> tuple[pa.Table | None, str]:
        """(the table with its stamp checked and only its pandas metadata kept, "") or (None,
        the problem); page checksums are verified."""
        path = self.path(task, table)
        try:
            arrow = pq.read_table(path, page_checksum_verification=True)
        except (OSError, pa.ArrowException) as exc:
            return None, f"{path.name}: unreadable ({_first_line(exc)})"
        meta = arrow.schema.metadata or {}
        problem = _check_stamp(_decode_stamp(meta), path, task, table, arrow.num_rows)
        if problem:
            return None, problem
        keep = {k: v for k, v in meta.items() if k != STAMP_KEY}
        return arrow.replace_schema_metadata(keep), ""

    def digest_inputs(self, tasks: list[Task]) -> str:
        """What the metrics of ``tasks`` were computed from: each stored file's identity, size and
        modification time, so rewritten task files never leave stale aggregates in use."""
        parts = []
        for t in tasks:
            for table in TABLES:
                p = self.path(t, table)
                try:
                    s = p.stat()
                except FileNotFoundError:
                    continue
                parts.append(f"{table}/{p.name}:{s.st_size}:{s.st_mtime_ns}:{s.st_ino}")
        return "\n".join(parts)

    # --- run bookkeeping -------------------------------------------------------------------
    def write_json(self, name: str, obj) -> None:
        atomic_write_text(json.dumps(obj, indent=2, default=str), self.root / name)

    def read_json(self, name: str):
        path = self.root / name
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path}: unreadable ({_first_line(exc)}); move the sweep "
                              f"directory aside or pick another sweep=<name>") from None

    def _append(self, path: Path, record: dict) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")

    def log_failure(self, record: dict) -> None:
        self._append(self.failures_path, record)

    def log_timing(self, record: dict) -> None:
        """Wall-clock seconds of a finished task, kept apart from the result rows so that the
        task files themselves are bit-identical across runs."""
        self._append(self.timings_path, record)

    def remove_stale_temporaries(self) -> int:
        """Delete temporary files left by a killed run (never read: names start with '.')."""
        stale = [p for folder in (self.tasks_dir, self.diagnostics_dir, self.metrics_dir)
                 if folder.exists() for p in folder.glob(f"{TMP_PREFIX}*")]
        for p in stale:
            p.unlink(missing_ok=True)
        return len(stale)

    def clear_failures(self) -> None:
        self.failures_path.unlink(missing_ok=True)


# --- stamps ----------------------------------------------------------------------------------
def _stamp(task: Task, table: str, frame: pd.DataFrame, companions: dict | None = None) -> dict:
    stamp = {"key": task.key, "file_id": task.file_id, "table": table, "rows": len(frame)}
    if companions is not None:
        stamp["companions"] = companions
    return stamp


def _decode_stamp(metadata) -> dict | None:
    raw = (metadata or {}).get(STAMP_KEY)
    try:
        return json.loads(raw) if raw is not None else None
    except ValueError:
        return None


def _check_stamp(stamp, path: Path, task: Task, table: str, rows: int | None) -> str:
    if not isinstance(stamp, dict):
        return f"{path.name}: no task stamp in its footer"
    if stamp.get("file_id") != task.file_id or stamp.get("key") != task.key:
        return f"{path.name}: holds task {stamp.get('key')!r}, not this one"
    if stamp.get("table") != table:
        return f"{path.name}: holds the {stamp.get('table')} table, not {table}"
    if rows is not None and stamp.get("rows") != rows:
        return f"{path.name}: {rows} rows where {stamp.get('rows')} were written"
    return ""


def _read_stamp(path: Path, task: Task, table: str, expected_rows: int | None = None):
    """(stamp, problem) from the footer of ``path`` without reading its data."""
    try:
        meta = pq.read_metadata(path)
    except FileNotFoundError:
        return None, f"{path.name}: the {table} file is missing"
    except (OSError, pa.ArrowException) as exc:
        return None, f"{path.name}: unreadable footer ({_first_line(exc)})"
    stamp = _decode_stamp(meta.metadata)
    problem = _check_stamp(stamp, path, task, table, meta.num_rows)
    if not problem and expected_rows is not None and meta.num_rows != expected_rows:
        problem = f"{path.name}: {meta.num_rows} rows where the task recorded {expected_rows}"
    return stamp, problem


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


# --- atomic writes ---------------------------------------------------------------------------
def _atomic(path: Path, write) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=path.suffix, dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600 files; use the usual umask instead
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:  # e.g. a full disk: name the file being written, not the temporary
        Path(tmp).unlink(missing_ok=True)
        if exc.filename in (None, tmp):
            raise OSError(exc.errno, exc.strerror or _first_line(exc), str(path)) from exc
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_parquet(df: pd.DataFrame, path: Path, stamp: dict | None = None) -> None:
    """Write ``df`` (no index) with page checksums, and ``stamp`` in the footer if given."""

    def write(tmp):
        table = pa.Table.from_pandas(df, preserve_index=False)
        if stamp is not None:
            meta = dict(table.schema.metadata or {})
            meta[STAMP_KEY] = json.dumps(stamp, sort_keys=True).encode()
            table = table.replace_schema_metadata(meta)
        pq.write_table(table, tmp, write_page_checksum=True)

    _atomic(path, write)


def atomic_write_text(text: str, path: Path) -> None:
    _atomic(path, lambda tmp: Path(tmp).write_text(text))


def atomic_write_csv(df: pd.DataFrame, path: Path) -> None:
    _atomic(path, lambda tmp: df.to_csv(tmp, index=False))
