"""Executors: where the tasks of a sweep run.

- ``executor=local``: joblib over local processes (loky), ``executor.n_jobs`` of them.
- ``executor=dask``: joblib's dask backend against a ``dask.distributed`` scheduler. With
  ``executor.address=tcp://host:port`` the sweep joins that cluster; without an address it starts
  a ``LocalCluster`` (``executor.n_workers`` processes, default one per core, one thread each)
  listening on 127.0.0.1 only, and closes it when the sweep ends.

The executor only decides where tasks run. Every task seeds its own streams from the sweep's root
seed and the task's identity (harness/rng.py) and writes its own file, so the rows are bit-identical
whatever the executor, the number of workers or the order in which tasks finish.
"""

from __future__ import annotations

import contextlib
import re
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator

from ..errors import ConfigError, allowed
from ..validation import check_number

#: allowed keys of each executor's config (conf/executor/<name>.yaml)
KEYS = {"local": ("name", "n_jobs"), "dask": ("name", "address", "n_workers")}
INSTALL_DASK = 'pip install -e ".[dask]"'
ADDRESS_FORM = "tcp://host:port, e.g. tcp://10.0.0.5:8786"
_ADDRESS = re.compile(r"tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.\-]+):(\d{1,5})")
_CONNECT_TIMEOUT = "10s"


class ExecutorError(ConfigError):
    """The executor could not be reached or stopped the sweep (one line; finished tasks are kept,
    and re-running the same command resumes)."""


def check_overrides(overrides: list[str], default: Callable[[], str]) -> None:
    """Name unknown executor keys given on the command line, with the allowed keys of the chosen
    executor, before Hydra composes (and reports them less helpfully). ``default()`` names the
    executor of the defaults list (``conf/config.yaml``, read by the caller), asked for only
    when the command line sets executor keys without choosing an executor."""
    chosen = None
    keys = []
    for item in overrides:
        key, _, value = item.partition("=")
        if key.lstrip("+~") == "executor":
            chosen = value
        elif key.startswith("executor.") and not key.startswith(("+", "~")):
            keys.append(key)
    if not keys:
        return
    chosen = chosen or default()
    if chosen not in KEYS:
        return  # an executor group option this module does not know: Hydra reports it
    for key in keys:
        sub = key.split(".", 2)[1]
        if sub not in KEYS[chosen]:
            raise ConfigError(
                f"{key}: unknown key for executor={chosen} "
                f"(allowed: {', '.join('executor.' + k for k in KEYS[chosen])})"
            )


def require_dask() -> None:
    """One-line error when the optional ``dask`` extra is not installed."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"executor=dask: dask.distributed is not installed; install it with {INSTALL_DASK}"
        ) from None


def validate(executor: dict) -> None:
    """Check an executor config (one-line errors naming the key and the allowed values)."""
    name = executor.get("name")
    if name not in KEYS:
        raise allowed("executor.name", name, sorted(KEYS))
    unknown = sorted(set(executor) - set(KEYS[name]))
    if unknown:
        raise ConfigError(
            f"executor.{unknown[0]}: unknown key for executor={name} "
            f"(allowed: {', '.join('executor.' + k for k in KEYS[name])})"
        )
    if name == "local":
        n_jobs = executor.get("n_jobs", -1)
        check_number("executor.n_jobs", n_jobs, integer=True)
        if n_jobs == 0:
            raise ConfigError("executor.n_jobs: must be -1 (all cores) or >= 1, got 0")
        return
    address = executor.get("address")
    if address is not None and (not isinstance(address, str) or not _valid_address(address)):
        raise ConfigError(f"executor.address: {address!r} is not a scheduler address "
                          f"(expected {ADDRESS_FORM}, or null to start a LocalCluster)")
    n_workers = executor.get("n_workers")
    if n_workers is not None:
        check_number("executor.n_workers", n_workers, integer=True, minimum=1)
        if address is not None:
            raise ConfigError("executor.n_workers: only for a LocalCluster (no executor.address); "
                              "an existing cluster has the workers it was started with")
    require_dask()


def _valid_address(address: str) -> bool:
    m = _ADDRESS.fullmatch(address)
    return bool(m) and 1 <= int(m.group(2)) <= 65535


def n_workers(executor: dict) -> int | None:
    """Worker processes the executor will use, when known before it starts."""
    from joblib import cpu_count

    if executor["name"] == "local":
        n_jobs = int(executor.get("n_jobs", -1))
        return max(1, cpu_count() + 1 + n_jobs) if n_jobs < 0 else n_jobs
    if executor.get("address"):
        return None
    return int(executor.get("n_workers") or cpu_count())


def describe(executor: dict) -> str:
    if executor["name"] == "local":
        return f"local ({n_workers(executor)} processes)"
    if executor.get("address"):
        return f"dask ({executor['address']})"
    return f"dask (LocalCluster, {n_workers(executor)} workers)"


@contextlib.contextmanager
def parallel(executor: dict, **kwargs) -> Iterator:
    """A ``joblib.Parallel`` (``kwargs`` such as ``return_as``) running on the configured executor;
    for dask, the cluster or connection lives as long as the ``with`` block."""
    from joblib import Parallel

    if executor["name"] == "local":
        runner = Parallel(n_jobs=executor.get("n_jobs", -1), backend="loky", **kwargs)
        # one worker: joblib runs the tasks in this process, which must hear Ctrl-C at once
        if n_workers(executor) == 1:
            yield runner
            return
        _start_quiet_resource_tracker()
        yield _owner_takes_sigint(runner)
        return
    require_dask()
    from joblib import parallel_config

    with _dask_client(executor) as client:
        _check_workers(client, executor)
        try:
            with parallel_config(backend="dask", client=client):
                yield Parallel(n_jobs=-1, **kwargs)
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - lost workers, scheduler gone, ...
            where = executor.get("address") or "LocalCluster"
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise ExecutorError(
                f"executor=dask ({where}): the sweep stopped: {type(exc).__name__}: {message}; "
                f"finished tasks are kept, re-run the same command to resume"
            ) from exc


def close_quietly(outcomes) -> None:
    """Close the generator a ``parallel(..., return_as="generator...")`` runner returned, now:
    joblib then stops the local workers before the caller counts what was saved, instead of
    whenever the generator is collected (after the command's last line, or while the
    interpreter exits). Closing one left early (Ctrl-C, an error) would also warn that "N
    tasks ... have been cancelled": the sweep says itself what was saved, so that warning is
    not shown. Closing an exhausted generator does nothing."""
    close = getattr(outcomes, "close", None)
    if close is None:
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning,
                                message=r".*You could benefit from adjusting the input task")
        close()


#: the warnings loky's resource tracker prints when it exits and finds the semaphores of workers
#: killed by Ctrl-C still registered ("There appear to be 1 leaked semlock objects", then
#: "FileNotFoundError" for one already removed): it removes them all the same
_TRACKER_LEAK_WARNINGS = ("ignore:resource_tracker:UserWarning:"
                          "joblib.externals.loky.backend.resource_tracker")


def _start_quiet_resource_tracker() -> None:
    """Start loky's resource tracker (if this process has none yet) with its leak warnings
    ignored. The tracker is a separate process that outlives the sweep's and writes to the same
    stderr: after a Ctrl-C it could print those warnings after the command's one-line message.
    The option is passed on the tracker's command line only (loky builds it from
    ``sys.warnoptions``) and taken off again at once; this process's warnings are unchanged."""
    from joblib.externals.loky.backend import resource_tracker

    sys.warnoptions.append(_TRACKER_LEAK_WARNINGS)
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(_TRACKER_LEAK_WARNINGS)


def _owner_takes_sigint(runner):
    """``runner`` (a ``joblib.Parallel``), called with SIGINT ignored while it starts its pool
    (a fraction of a second: the worker processes are started, not waited for). The workers
    inherit the ignored signal from their first instruction on: Ctrl-C, which a terminal sends
    to the whole process group, then reaches only the sweep's process, which kills the workers
    (joblib does, on KeyboardInterrupt), instead of every worker still importing its modules
    printing a traceback."""

    def run(jobs):
        if threading.current_thread() is not threading.main_thread():
            return runner(jobs)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return runner(jobs)
        finally:
            signal.signal(signal.SIGINT, previous)

    return run


@contextlib.contextmanager
def _dask_client(executor: dict) -> Iterator:
    from distributed import Client, LocalCluster

    address = executor.get("address")
    if address:
        try:
            client = Client(address, timeout=_CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(f"executor.address: cannot connect to the scheduler at {address} "
                                f"({type(exc).__name__}: {exc})") from None
        with client:
            yield client
        return
    # loopback only; no dashboard, and the scheduler's small HTTP server on a free port (not
    # 8787) so that several sweeps can run side by side
    cluster = LocalCluster(
        n_workers=n_workers(executor), threads_per_worker=1, processes=True,
        host="127.0.0.1", dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    )
    with cluster, Client(cluster, set_as_default=False) as client:
        yield client


def _worker_version() -> str:
    """Runs on a worker: the code version of the harness installed there."""
    from .fingerprint import code_version

    return code_version.__wrapped__()


def _local_version() -> str:
    """This process's code version, hashed now (as the workers do)."""
    return _worker_version()


def _check_workers(client, executor: dict) -> None:
    """Every worker must run the same harness code as this process (rows record it, and task
    identities include it)."""
    where = executor.get("address") or "LocalCluster"
    try:
        versions = client.run(_worker_version)
    except Exception as exc:  # noqa: BLE001 - dask re-raises worker errors as plain Exception
        text = str(exc)
        if "ModuleNotFoundError" in text or "ImportError" in text or isinstance(exc, ImportError):
            raise ExecutorError(
                f"executor=dask ({where}): a worker cannot import the harness ({text}); install "
                f"the project on every worker with {INSTALL_DASK}"
            ) from None
        raise ExecutorError(f"executor=dask ({where}): cannot query the workers "
                            f"({type(exc).__name__}: {text})") from None
    if not versions and executor.get("address"):
        return  # no worker yet: joblib waits for one (and fails with a timeout)
    mine = _local_version()
    for worker, version in sorted(versions.items()):
        if version != mine:
            raise ExecutorError(
                f"executor=dask ({where}): worker {worker} runs harness {version}, this process "
                f"{mine}; install the same code version on every worker ({INSTALL_DASK})"
            )
