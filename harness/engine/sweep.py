"""Sweep execution: plan the tasks, skip finished ones, run the rest with joblib on
the configured executor (local processes, or a dask cluster; BLAS threads limited to 1 per
worker), log failures, show progress."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from joblib import delayed
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from ..errors import ConfigError, SweepInterrupted
from .executor import close_quietly, parallel
from .fingerprint import (  # noqa: F401  (aggregation_version, source_roots: re-exported)
    aggregation_version,
    code_version,
    source_roots,
    study_module,
)
from .grid import Task, plan_tasks
from .store import SweepStore
from .study import load_study
from .task import run_task


def sweep_dir(config: dict) -> Path:
    return Path(config["out_dir"]) / config["study"]["name"] / config["sweep"]


@functools.lru_cache(maxsize=4)
def _study(study_json: str):
    return load_study(json.loads(study_json))


def execute_task(config: dict, task: Task, store_root: str, owner_pid: int | None = None, *,
                 version: str) -> dict:
    """Run one task in a worker and write its rows; never raises (failures are returned).

    ``owner_pid`` is the process that runs the sweep: a worker started by it exits as soon as it
    is gone (see :func:`_stop_with_owner`). ``version`` is the sweep's code version, in the
    task's file name: a worker whose sources hash otherwise (one started after the code was
    edited mid-sweep, e.g. to replace one that died) fails the task instead of storing rows of
    other code under that name. The outcome records the task's wall seconds and the CPU seconds
    of its process (``cpu_seconds``: what a task costs whatever else the machine runs; wall
    seconds grow with the load)."""
    _stop_with_owner(owner_pid)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        here = code_version(study_module(config))
        if here != version:
            raise RuntimeError(f"this worker's code is {here}, the sweep's {version}: the "
                               f"sources changed while the sweep ran; the task is not stored")
        with threadpool_limits(limits=1):
            study = _study(json.dumps(config["study"], sort_keys=True))
            result = run_task(study, task, config)
            result.rows["code_version"] = here
            SweepStore(Path(store_root)).write_task(task, result.rows, result.diagnostics,
                                                    result.metrics)
        return {"key": task.key, "ok": True, "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0, "replicates": task.n_replicates}
    except Exception as exc:  # noqa: BLE001 - recorded in the failure log
        return {"key": task.key, "ok": False, "seconds": time.perf_counter() - t0,
                "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(),
                "seed": config["seed"], "replicates": task.n_replicates}


_WATCHING: int | None = None  # the pid of this process once its watchdog runs
_WATCH_INTERVAL = 0.2  # seconds
#: what timings.jsonl records per finished task
TIMING_KEYS = ("key", "ok", "seconds", "cpu_seconds", "replicates")


def _stop_with_owner(owner_pid: int | None) -> None:
    """In a worker process of the local executor (a loky worker), end this process as soon as
    the sweep's process ``owner_pid`` is gone: at once if it is gone already (the worker was
    still starting when the sweep was killed), otherwise from a daemon thread that watches the
    parent. Killed with SIGKILL, the sweep cannot tell its pool to stop, and its workers would
    go on running queued tasks and writing task files for minutes. Nothing happens in the
    sweep's own process (n_jobs=1) or when ``owner_pid`` is None (dask workers, which the
    sweep did not start and whose nanny watches them)."""
    global _WATCHING
    pid = os.getpid()
    if owner_pid is None or pid == owner_pid or _WATCHING == pid:
        return
    if os.getppid() != owner_pid:
        os._exit(70)  # EX_SOFTWARE: the sweep that started this worker is gone
    _WATCHING = pid

    def watch():
        while os.getppid() == owner_pid:
            time.sleep(_WATCH_INTERVAL)
        os._exit(70)

    threading.Thread(target=watch, name="harness-owner-watchdog", daemon=True).start()


@dataclass
class SweepSummary:
    root: Path
    n_tasks: int
    skipped: int
    ran: int
    failed: list[dict]
    seconds: float
    damaged: list[str] = field(default_factory=list)  # one line per damaged task, moved aside

    def line(self) -> str:
        damaged = (f" ({len(self.damaged)} damaged, moved aside and run again)"
                   if self.damaged else "")
        return (
            f"{self.n_tasks} tasks: {self.skipped} already done, {self.ran} run{damaged}, "
            f"{len(self.failed)} failed in {self.seconds:.1f} s -> {self.root}"
        )

    def show(self, failed_note: str = "re-run one task with harness replay '<task key>'"):
        """Print the summary line; damaged tasks and failures go to stderr."""
        for line in self.damaged:
            print(f"damaged: {line}", file=sys.stderr)
        print(self.line())
        for f in self.failed[:5]:
            print(f"failed: {f['key']}: {f['error']}", file=sys.stderr)
        if self.failed:
            print(f"failure log: {self.root / 'failures.jsonl'}; {failed_note}",
                  file=sys.stderr)


MANIFEST = "manifest.json"


@contextlib.contextmanager
def _interruptible(store: SweepStore, tasks: list[Task]):
    """Turn Ctrl-C during a sweep into :class:`SweepInterrupted`. It is raised once the
    executor's block has exited: joblib has killed the local workers (a dask LocalCluster is
    closed), so nothing writes task files any more and the count of saved tasks is what a resume
    will find."""
    try:
        yield
    except KeyboardInterrupt:
        saved = sum(store.task_path(t).exists() for t in tasks)
        raise SweepInterrupted(saved, len(tasks)) from None


def sweep_identity(config: dict) -> dict:
    """What the rows of a sweep directory depend on besides the code: the root seed, the block
    size, the study's settings and each method's settings. Two configs that differ here must
    not share a sweep directory (their manifests, metrics, tables and figures would overwrite
    each other). The grid, the replicate count and the subset of methods may change: a grown
    sweep reuses the tasks it already has.

    The identity is returned in the manifest's JSON form (mapping keys as strings, tuples as
    lists), so a config is compared with the manifest it wrote: a mapping with integer keys
    (e.g. ``round_to: {10: [0, 1]}``) is the same setting after the round trip."""
    study = config["study"]
    identity = {
        "seed": config["seed"],
        "block_size": config["block_size"],
        "study": {k: v for k, v in study.items()
                  if k not in ("replicates", "roster", "grid", "benchmark")},
        "roster": study.get("roster", {}),
    }
    return json.loads(json.dumps(identity, default=str))


def check_sweep_dir(config: dict) -> None:
    """Refuse (one line, nothing written) to run a config into a sweep directory that holds a
    sweep of another identity (:func:`sweep_identity`)."""
    root = sweep_dir(config)
    manifest = SweepStore(root).read_json(MANIFEST)
    if not manifest or "config" not in manifest:
        return
    old, new = sweep_identity(manifest["config"]), sweep_identity(config)
    old_roster, new_roster = old.pop("roster"), new.pop("roster")
    old_roster = {**old_roster, **_earlier_roster(manifest)}
    old, new = _flat(old), _flat(new)
    differing = [k for k in sorted(set(old) | set(new)) if old.get(k, _UNSET) != new.get(k, _UNSET)]
    # a method may be added or left out; one label with two settings may not share the directory
    differing += [f"roster.{label}" for label in new_roster
                  if label in old_roster and old_roster[label] != new_roster[label]]
    if differing:
        there, here = {**old, **_prefixed(old_roster)}, {**new, **_prefixed(new_roster)}
        shown = ", ".join(f"{k} ({there.get(k, _UNSET)!r} there, {here.get(k, _UNSET)!r} here)"
                          for k in differing[:3])
        more = f" and {len(differing) - 3} more" if len(differing) > 3 else ""
        raise ConfigError(
            f"sweep: {root} holds a sweep with other settings: {shown}{more}; give this one its "
            f"own sweep=<name> (or out_dir=<dir>), or delete {root} to start over"
        )


_UNSET = "unset"


def _earlier_roster(manifest: dict | None) -> dict:
    """The roster entries of every method the sweep directory's earlier runs named (the
    manifest's ``roster``; a manifest written before it existed: its config's roster)."""
    manifest = manifest or {}
    if "roster" in manifest:
        return dict(manifest["roster"])
    return dict(((manifest.get("config") or {}).get("study") or {}).get("roster") or {})


def sweep_roster(config: dict) -> dict:
    """label → roster entry of every method the sweep directory has been run with: the config's
    roster, then the labels only earlier runs named (a plug-in an earlier command added), as
    their manifest keeps them. A run of a ``methods=`` subset, or with a roster that lacks an
    earlier run's plug-in, so still knows every method the directory holds."""
    earlier = _earlier_roster(SweepStore(sweep_dir(config)).read_json(MANIFEST))
    roster = dict(config["study"].get("roster") or {})
    for label, spec in earlier.items():
        roster.setdefault(label, spec)
    return roster


def sweep_tasks(config: dict) -> list[Task]:
    """The tasks whose rows the sweep's aggregates, tables and figures read (issue 24 item 1:
    a sweep's outputs cover every task it holds, whichever ``methods=`` subset ran last): this
    config's tasks, and for every other method of :func:`sweep_roster` each scenario whose
    tasks under this config (grid, replicate count, block size, code) are all stored. A scenario
    a method holds only in part (a grown grid, an interrupted run) is left out, never shown
    over fewer replicates. The order is the same whichever subset ran: scenario, block, then
    method in roster order."""
    study = load_study(config["study"])
    roster = sweep_roster(config)
    chosen = set(config["methods"])
    every = dict(config, study=dict(config["study"], roster=roster), methods=list(roster))
    tasks = plan_tasks(study, every, code_version(study_module(config)))
    store = SweepStore(sweep_dir(config))
    complete: dict[tuple, bool] = {}
    for t in tasks:
        if t.method not in chosen:
            pair = (t.scenario, t.method)
            complete[pair] = complete.get(pair, True) and store.task_path(t).exists()
    return [t for t in tasks if t.method in chosen or complete[(t.scenario, t.method)]]


def _prefixed(roster: dict) -> dict:
    return {f"roster.{label}": spec for label, spec in roster.items()}


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out.update(_flat(v, key + "."))
        else:
            out[key] = v
    return out


def run_sweep(config: dict, *, progress: bool = True, listener=None) -> SweepSummary:
    """Run every task of the sweep that is not done.

    ``listener.stored(key)`` is called in this process as each task is stored, and for each task
    an earlier run stored once this run's first task is back (e.g. a
    :class:`~harness.engine.aggregate.MetricsStream`, which aggregates while workers compute).

    Nothing in the sweep directory is touched until the executor is up: a sweep that cannot
    start (an unreachable scheduler) leaves an earlier run's manifest, failure log and files as
    they were. Damaged task files (see :mod:`.store`) are moved aside and their tasks run again.
    """
    study = load_study(config["study"])
    check_sweep_dir(config)
    version = code_version(study_module(config))
    tasks = plan_tasks(study, config, version)
    store = SweepStore(sweep_dir(config))
    earlier = store.read_json(MANIFEST) or {}
    held = sweep_tasks(config)
    roster = sweep_roster(config)
    states = {t.key: store.state(t) for t in tasks}
    todo = [t for t in tasks if not states[t.key].done]
    t0 = time.perf_counter()
    failed, damaged = [], []
    # local workers are this process's children and stop with it; dask workers are not
    owner = os.getpid() if config["executor"]["name"] == "local" else None
    jobs = (delayed(execute_task)(config, t, str(store.root), owner, version=version) for t in todo)
    reps = 0
    # the executor (for dask, a LocalCluster or a connection) starts only if there is work
    executor = (parallel(config["executor"], return_as="generator_unordered") if todo
                else contextlib.nullcontext())
    with _interruptible(store, tasks), executor as runner:
        # the executor is up: only now may this run replace what an earlier one left
        notice = other_code_notice(store.root, earlier, version, len(todo))
        if notice:
            print(notice, file=sys.stderr)
        # the manifest keeps every method the directory holds: a later subset's aggregates
        # read them too (sweep_tasks)
        store.write_json(MANIFEST, {"config": config,
                                    "code_version": version,
                                    "roster": roster,
                                    "tasks": [t.key for t in held]})
        store.clear_failures()
        store.remove_stale_temporaries()
        for t in todo:
            if states[t.key].damaged:
                where = store.move_aside(t)
                damaged.append(f"task {t.key}: {states[t.key].problem}; moved to {where}")
        bar = tqdm(total=len(todo), unit="task", disable=not progress or not todo,
                   mininterval=1.0, desc=f"{study.name}/{config['sweep']}")
        # tasks done by an earlier run are announced once the workers are busy
        announce = [t.key for t in tasks if states[t.key].done] if listener is not None else []
        outcomes = runner(jobs) if todo else iter(())
        try:
            for outcome in outcomes:
                for key in announce:
                    listener.stored(key)
                announce = []
                bar.update(1)
                reps += outcome["replicates"]
                bar.set_postfix(
                    replicates_per_s=f"{reps / max(time.perf_counter() - t0, 1e-9):.0f}",
                    refresh=False,
                )
                store.log_timing({k: outcome[k] for k in TIMING_KEYS if k in outcome})
                if not outcome["ok"]:
                    failed.append(outcome)
                    store.log_failure(outcome)
                elif listener is not None:
                    listener.stored(outcome["key"])
        finally:  # the workers stop here, before _interruptible counts
            close_quietly(outcomes)
        bar.close()
    return SweepSummary(store.root, len(tasks), len(tasks) - len(todo), len(todo) - len(failed),
                        failed, time.perf_counter() - t0, damaged)


def other_code_notice(root: Path, manifest: dict, version: str, to_run: int) -> str | None:
    """One line when a run will compute tasks while its sweep directory's last run was made by
    other row-making code (the manifest's ``code_version``): a task's file name hashes the code
    (:func:`~harness.engine.grid.plan_tasks`), so the earlier tasks stay on disk but none is
    reused. Edited code is a reason to recompute; a resume meant for the earlier tasks (e.g. run
    from another checkout than intended) is not, and would spend hours before anyone noticed."""
    before = manifest.get("code_version")
    if not to_run or not before or before == version:
        return None
    held = len(manifest.get("tasks") or [])
    return (f"notice: {root} holds {_tasks(held)} made by code {before}; this code is {version}, "
            f"so none of them is reused: this run computes {_tasks(to_run)} (to resume them, run "
            f"the code that made them)")


def _tasks(count: int) -> str:
    return f"{count} task" if count == 1 else f"{count} tasks"


def run_and_read(config: dict, read, *, show=None, listener=None):
    """Run the sweep, then ``read()`` its results; returns (summary, what ``read`` returned, or
    None when tasks failed). ``show(summary)`` reports each run; ``listener`` hears of each task
    stored (:func:`run_sweep`) and is ``reset()`` before each run. Reading verifies every page
    checksum: a file damaged in the middle is moved aside when read, and the sweep then runs its
    task again, once, before reading afresh."""
    from .store import DamagedResults

    for attempt in (1, 2):
        if listener is not None:
            listener.reset()
        summary = run_sweep(config, listener=listener)
        if show is not None:
            show(summary)
        if summary.failed:
            return summary, None
        try:
            return summary, read()
        except KeyboardInterrupt:  # while aggregating: every task is saved
            raise SweepInterrupted(summary.n_tasks, summary.n_tasks) from None
        except DamagedResults as exc:
            if attempt == 2:
                raise
            print(f"damaged: {exc}", file=sys.stderr)
    raise AssertionError("unreachable")


def find_task(config: dict, key: str) -> Task:
    study = load_study(config["study"])
    for task in plan_tasks(study, config, code_version(study_module(config))):
        if task.key == key:
            return task
    raise KeyError(key)
