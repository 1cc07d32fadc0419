"""Sweep execution (DESIGN §6): plan the tasks, skip finished ones, run the rest with joblib on
the configured executor (local processes, or a dask cluster; BLAS threads limited to 1 per
worker), log failures, show progress."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from joblib import delayed
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from .executor import parallel
from .grid import Task, plan_tasks
from .store import SweepStore
from .study import load_study
from .task import run_task

_ROOT = Path(__file__).resolve().parents[2]


# Modules that read rows but never make them: editing them must not invalidate stored results.
_NOT_ROW_MAKING = (
    "harness/cli.py", "harness/claims.py", "harness/plotting/", "harness/metrics/",
    "harness/engine/aggregate.py", "harness/engine/bench.py", "harness/engine/check.py",
    "harness/engine/executor.py", "harness/multirun.py",
    "_claims.py", "_tables.py",
    "_figures.py", "paper_numbers.py",
)


@functools.cache
def code_version() -> str:
    """Package version plus a hash of the sources that make rows (synthesizers, studies, engine):
    rows made by other code are never reused by a resumed sweep."""
    from .. import __version__

    h = hashlib.sha256()
    for pkg in ("harness", "experiments"):
        for path in sorted((_ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(_ROOT).as_posix()
            if any(rel.startswith(x) or rel.endswith(x) for x in _NOT_ROW_MAKING):
                continue
            h.update(rel.encode())
            h.update(path.read_bytes())
    return f"{__version__}+{h.hexdigest()[:12]}"


def sweep_dir(config: dict) -> Path:
    return Path(config["out_dir"]) / config["study"]["name"] / config["sweep"]


@functools.lru_cache(maxsize=4)
def _study(study_json: str):
    return load_study(json.loads(study_json))


def execute_task(config: dict, task: Task, store_root: str) -> dict:
    """Run one task in a worker and write its rows; never raises (failures are returned)."""
    t0 = time.perf_counter()
    try:
        with threadpool_limits(limits=1):
            study = _study(json.dumps(config["study"], sort_keys=True))
            result = run_task(study, task, config)
            result.rows["code_version"] = code_version()
            SweepStore(Path(store_root)).write_task(task, result.rows, result.diagnostics,
                                                    result.metrics)
        return {"key": task.key, "ok": True, "seconds": time.perf_counter() - t0,
                "replicates": task.n_replicates}
    except Exception as exc:  # noqa: BLE001 - recorded in the failure log
        return {"key": task.key, "ok": False, "seconds": time.perf_counter() - t0,
                "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(),
                "seed": config["seed"], "replicates": task.n_replicates}


@dataclass
class SweepSummary:
    root: Path
    n_tasks: int
    skipped: int
    ran: int
    failed: list[dict]
    seconds: float

    def line(self) -> str:
        return (
            f"{self.n_tasks} tasks: {self.skipped} already done, {self.ran} run, "
            f"{len(self.failed)} failed in {self.seconds:.1f} s -> {self.root}"
        )


def run_sweep(config: dict, *, progress: bool = True) -> SweepSummary:
    study = load_study(config["study"])
    tasks = plan_tasks(study, config, code_version())
    store = SweepStore(sweep_dir(config))
    store.write_json(
        "manifest.json",
        {"config": config, "code_version": code_version(), "tasks": [t.key for t in tasks]},
    )
    store.clear_failures()
    store.remove_stale_temporaries()
    todo = [t for t in tasks if not store.is_done(t)]
    t0 = time.perf_counter()
    failed = []
    jobs = (delayed(execute_task)(config, t, str(store.root)) for t in todo)
    reps = 0
    # the executor (for dask, a LocalCluster or a connection) starts only if there is work
    executor = (parallel(config["executor"], return_as="generator_unordered") if todo
                else contextlib.nullcontext())
    with executor as runner:
        bar = tqdm(total=len(todo), unit="task", disable=not progress or not todo,
                   mininterval=1.0, desc=f"{study.name}/{config['sweep']}")
        for outcome in runner(jobs) if todo else []:
            bar.update(1)
            reps += outcome["replicates"]
            bar.set_postfix(
                replicates_per_s=f"{reps / max(time.perf_counter() - t0, 1e-9):.0f}",
                refresh=False,
            )
            if not outcome["ok"]:
                failed.append(outcome)
                store.log_failure(outcome)
    bar.close()
    return SweepSummary(store.root, len(tasks), len(tasks) - len(todo), len(todo) - len(failed),
                        failed, time.perf_counter() - t0)


def find_task(config: dict, key: str) -> Task:
    study = load_study(config["study"])
    for task in plan_tasks(study, config, code_version()):
        if task.key == key:
            return task
    raise KeyError(key)
