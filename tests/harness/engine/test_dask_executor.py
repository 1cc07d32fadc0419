"""executor=dask (DESIGN §5–§6): the same rows as local joblib, bit for bit; a worker killed
mid-sweep loses nothing; failures are logged as with loky; bad executor config gives one line."""

import contextlib
import io
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import pytest
from pandas.testing import assert_frame_equal
from study_helpers import stored_files

from harness import cli, config
from harness.engine import executor as executor_mod
from harness.engine.aggregate import aggregate, read_rows
from harness.engine.grid import plan_tasks
from harness.engine.store import SweepStore
from harness.engine.study import load_study
from harness.engine.sweep import code_version, run_sweep, sweep_dir

distributed = pytest.importorskip("distributed")

# 300 replicates in blocks of 100, 2 scenarios, 6 methods: 36 short tasks, run three times
# (local joblib, the sweep's own cluster, the killed worker's); a worker is killed once 3 are
# stored (72 tasks, as before, only made each run twice as long)
SMALL = [
    "study=bowen_liu_sim1",
    "profile=ci",
    "study.replicates.ci=300",
    "block_size=100",
    "study.grid.n=[40,100]",
    "study.grid.pi=[0.15]",
    "study.log_epsilon=[-2,0,2]",
]
N_TASKS = 2 * 3 * 6


def _load(out, *extra):
    return config.load([*SMALL, *extra, f"out_dir={out}"])


def _rows(cfg):
    """The rows without their timing and the code version: other sessions may edit the sources
    while these tests run, and fresh worker processes hash the sources anew."""
    rows = read_rows(cfg)
    assert rows["code_version"].nunique() == 1
    return rows.drop(columns=["code_version"])


def _task_files(root: Path) -> list[Path]:
    tasks = root / "tasks"
    return sorted(p for p in tasks.glob("*.parquet") if not p.name.startswith(".tmp-")) \
        if tasks.exists() else []


def _main(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The sweep with local joblib, in this process."""
    cfg = _load(tmp_path_factory.mktemp("local"), "executor.n_jobs=1")
    summary = run_sweep(cfg, progress=False)
    assert summary.failed == [] and summary.ran == N_TASKS
    return _rows(cfg), aggregate(cfg), sweep_dir(cfg)


@pytest.fixture(scope="module")
def cluster():
    """An existing two-worker cluster on the loopback interface, joined by executor.address."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as lc, \
            Client(lc, set_as_default=False) as client:
        yield lc, client


def _assert_same(cfg, reference):
    rows, metrics, root = reference
    assert_frame_equal(_rows(cfg), rows, check_exact=True)
    assert stored_files(sweep_dir(cfg)) == stored_files(root)  # the files, bit for bit
    assert_frame_equal(aggregate(cfg), metrics, check_exact=True)
    assert len(rows) == 2 * 300 * (3 * 4 + 2)  # scenarios x reps x (ε x DP methods + 2)
    assert rows["estimate"].nunique() > 100  # many distinct random numbers: not vacuous


def test_dask_local_cluster_gives_the_local_joblib_results(reference, tmp_path, capsys):
    """The sweep starts a LocalCluster of its own (executor.n_workers). One worker: each dask
    worker is two processes (nanny and worker) of ~2.5 CPU-s of start-up, and the rows of a
    two-worker cluster are checked bit for bit against local joblib below
    (test_killed_dask_worker_loses_nothing, on the module's two-worker cluster); this cluster
    is started by the same code for any n_workers."""
    cfg = _load(tmp_path, "executor=dask", "executor.n_workers=1")
    assert cfg["executor"] == {"name": "dask", "address": None, "n_workers": 1}
    summary = run_sweep(cfg, progress=True)
    assert summary.failed == [] and summary.ran == N_TASKS and summary.skipped == 0
    _assert_same(cfg, reference)
    # the progress bar counts every task
    assert f"{N_TASKS}/{N_TASKS}" in capsys.readouterr().err
    # a re-run skips everything and starts no cluster
    t0 = time.perf_counter()
    again = run_sweep(cfg, progress=False)
    assert (again.skipped, again.ran) == (N_TASKS, 0)
    assert time.perf_counter() - t0 < 5.0


def test_failed_task_on_dask_is_logged_and_the_rerun_resumes(cluster, tmp_path):
    lc, _ = cluster
    cfg = config.load([
        "study=bowen_liu_sim1", "profile=ci", "study.replicates.ci=200", "block_size=100",
        "study.grid.n=[40]", "study.grid.pi=[0.15]", "methods=[LAP]", "executor=dask",
        f"executor.address={lc.scheduler_address}", f"out_dir={tmp_path}",
    ])
    tasks = plan_tasks(load_study(cfg["study"]), cfg, code_version(cfg["study"]["module"]))
    assert len(tasks) == 2
    # a directory where the task's diagnostics file goes: its write fails on the worker
    blocked = SweepStore(sweep_dir(cfg)).diagnostics_path(tasks[1])
    blocked.mkdir(parents=True)
    summary = run_sweep(cfg, progress=False)
    assert [f["key"] for f in summary.failed] == [tasks[1].key] and summary.ran == 1
    assert "Error" in summary.failed[0]["error"] and summary.failed[0]["traceback"]
    log = (sweep_dir(cfg) / "failures.jsonl").read_text()
    assert tasks[1].key in log and tasks[0].key not in log
    blocked.rmdir()
    summary = run_sweep(cfg, progress=False)
    assert (summary.skipped, summary.ran, summary.failed) == (1, 1, [])


def test_killed_dask_worker_loses_nothing(reference, cluster, tmp_path):
    lc, client = cluster
    cfg = _load(tmp_path, "executor=dask", f"executor.address={lc.scheduler_address}")
    root = sweep_dir(cfg)
    pids = client.run(os.getpid)
    assert len(pids) == 2
    killed = {}

    def kill_a_busy_worker():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "pid" not in killed:
            done = len(_task_files(root))
            if done >= 3:
                busy = [w for w, keys in client.processing().items() if keys and w in pids]
                if busy:
                    killed.update(pid=pids[busy[0]], done=done)
                    os.kill(pids[busy[0]], signal.SIGKILL)
                    return
            time.sleep(0.002)

    killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
    killer.start()
    try:
        summary = run_sweep(cfg, progress=False)
    except executor_mod.ExecutorError:  # the scheduler gave up on a task: resume
        summary = None
    killer.join(timeout=130)
    assert "pid" in killed, "no worker was busy after the first task files appeared"
    assert killed["done"] < N_TASKS  # killed mid-sweep
    with pytest.raises(ProcessLookupError):
        os.kill(killed["pid"], 0)
    if summary is None or summary.failed:
        summary = run_sweep(cfg, progress=False)
    assert summary.failed == []
    assert len(_task_files(root)) == N_TASKS
    _assert_same(cfg, reference)
    # the cluster's nanny replaces the killed worker
    client.wait_for_workers(2, timeout=120)
    assert killed["pid"] not in client.run(os.getpid).values()


def test_workers_must_run_the_same_harness(cluster, tmp_path, monkeypatch):
    lc, _ = cluster
    argv = ["run", *SMALL, "methods=[Ori]", "executor=dask",
            f"executor.address={lc.scheduler_address}", f"out_dir={tmp_path}"]
    # a worker that runs other code
    monkeypatch.setattr(executor_mod, "_local_version", lambda: "0.0.0+elsewhere")
    line = _assert_one_line(*_main(argv), "executor=dask", None)
    assert "runs harness" in line and "same code version" in line
    assert not _task_files(tmp_path / "bowen_liu_sim1" / "ci")
    # a worker that cannot import what the sweep sends it (a module only this process has)
    (tmp_path / "only_here.py").write_text("def version():\n    return 'x'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import only_here

    monkeypatch.setattr(executor_mod, "_worker_version", only_here.version)
    line = _assert_one_line(*_main(argv), "executor=dask", None)
    assert "cannot import" in line and 'pip install -e ".[dask]"' in line


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BAD = {
    "local key under dask": (
        ["executor=dask", "executor.n_jobs=2"], "executor.n_jobs",
        ["executor.name", "executor.address", "executor.n_workers"]),
    "dask key under local": (
        ["executor.address=tcp://127.0.0.1:8786"], "executor.address",
        ["executor.name", "executor.n_jobs"]),
    "added unknown key": (
        ["executor=dask", "+executor.threads=2"], "executor.threads",
        ["executor.name", "executor.address", "executor.n_workers"]),
    "address without scheme": (
        ["executor=dask", "executor.address=localhost:8786"], "executor.address", None),
    "address with another scheme": (
        ["executor=dask", "executor.address=http://localhost:8786"], "executor.address", None),
    "address without port": (
        ["executor=dask", "executor.address=tcp://localhost"], "executor.address", None),
    "port out of range": (
        ["executor=dask", "executor.address=tcp://localhost:70000"], "executor.address", None),
    "n_workers zero": (["executor=dask", "executor.n_workers=0"], "executor.n_workers", None),
    "n_workers not integer": (
        ["executor=dask", "executor.n_workers=1.5"], "executor.n_workers", None),
    "n_workers with an address": (
        ["executor=dask", "executor.address=tcp://10.0.0.5:8786", "executor.n_workers=2"],
        "executor.n_workers", None),
    "unknown executor": (["executor=slurm"], "executor", ["dask", "local"]),
}


def _assert_one_line(status, stdout, stderr, key, allowed_values):
    assert status == 2, (stdout, stderr)
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert key in lines[0] and "Traceback" not in stdout + stderr
    for value in allowed_values or []:
        assert value in lines[0].split("allowed:", 1)[1], (value, lines[0])
    return lines[0]


@pytest.mark.parametrize("case", list(BAD))
def test_bad_executor_config_gives_one_line(case, tmp_path):
    overrides, key, allowed_values = BAD[case]
    out = tmp_path / "out"
    line = _assert_one_line(*_main(["run", *overrides, f"out_dir={out}"]), key, allowed_values)
    if "address" in case and "n_workers" not in case:
        assert "expected tcp://host:port" in line
    assert not out.exists()  # nothing written


def test_dask_not_installed_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    out = tmp_path / "out"
    line = _assert_one_line(*_main(["run", "executor=dask", f"out_dir={out}"]), "executor=dask",
                            None)
    assert 'pip install -e ".[dask]"' in line
    assert not out.exists()
    # executor=local does not need dask
    assert config.load(["executor.n_jobs=1"])["executor"]["name"] == "local"


def test_unreachable_scheduler_gives_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(executor_mod, "_CONNECT_TIMEOUT", "1s")
    address = f"tcp://127.0.0.1:{_free_port()}"
    line = _assert_one_line(
        *_main(["run", *SMALL, "methods=[Ori]", "executor=dask", f"executor.address={address}",
                f"out_dir={tmp_path}"]),
        "executor.address", None)
    assert "cannot connect" in line and address in line
