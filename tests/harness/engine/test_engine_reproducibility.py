"""Reproducibility of sweeps (DESIGN §5–§6): results do not depend on the number of workers, on
interruption and resumption, on the rest of the roster or on re-running; the root seed alone
decides the numbers."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal
from process_helpers import alive as _alive
from process_helpers import descendants as _descendants
from study_helpers import stored_files

from harness import config
from harness.engine.aggregate import aggregate, read_rows
from harness.engine.sweep import code_version, run_sweep, sweep_dir
from harness.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]
SMALL = [
    "study=bowen_liu_sim1",
    "profile=ci",
    "study.replicates.ci=300",
    "block_size=100",
    "study.grid.n=[40,100]",
    "study.grid.pi=[0.15,0.5]",
    "study.log_epsilon=[-2,0,2]",
]
# 750 replicates in blocks of 250 over 4 scenarios and 6 methods: 72 tasks, seconds on two fresh
# workers (most of it start-up), so a run can be killed part-way: the kill comes within 10 ms of
# the 5th task file, when 67 tasks are still to run (about 3 s of work at 24 tasks a second per
# worker on a fast CPU). The resume and the uninterrupted run behind it run about 140 tasks in
# all (they ran 280 with 1500 replicates).
BIG = [
    "study=bowen_liu_sim1",
    "profile=paper",
    "study.replicates.paper=750",
    "block_size=250",
    "study.grid.n=[40,100]",
    "study.grid.pi=[0.15,0.5]",
    "study.log_epsilon=[-2,0,2]",
    "sweep=killed",
]


def _load(overrides, out, *extra):
    return config.load([*overrides, *extra, f"out_dir={out}"])


def _rows(cfg) -> pd.DataFrame:
    return read_rows(cfg)



def _task_files(root: Path) -> list[Path]:
    """Finished task files (temporary files of interrupted writes are named .tmp-*)."""
    tasks = root / "tasks"
    if not tasks.exists():
        return []
    return sorted(p for p in tasks.glob("*.parquet") if not p.name.startswith(".tmp-"))


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The small sweep, all methods, one worker."""
    cfg = _load(SMALL, tmp_path_factory.mktemp("serial"), "executor.n_jobs=1")
    summary = run_sweep(cfg, progress=False)
    assert summary.failed == []
    assert summary.n_tasks == 2 * 2 * 3 * 6 and summary.ran == summary.n_tasks
    return cfg, _rows(cfg), aggregate(cfg)


def test_results_do_not_depend_on_the_number_of_workers(serial, tmp_path):
    cfg1, rows1, metrics1 = serial
    cfg2 = _load(SMALL, tmp_path, "executor.n_jobs=2")
    summary = run_sweep(cfg2, progress=False)
    assert summary.failed == [] and summary.skipped == 0 and summary.ran == summary.n_tasks
    assert sweep_dir(cfg2) != sweep_dir(cfg1)
    rows2 = _rows(cfg2)
    assert_frame_equal(rows1, rows2, check_exact=True)
    # the task files themselves are bit-identical (no wall-clock timings in the rows)
    assert "task_seconds" not in rows1.columns
    files1, files2 = stored_files(sweep_dir(cfg1)), stored_files(sweep_dir(cfg2))
    assert len(files1) == 72 + 24 and files1 == files2  # rows; diagnostics of MODIPS, MD
    assert_frame_equal(metrics1, aggregate(cfg2), check_exact=True)
    # the comparison is not vacuous: the rows are many distinct random numbers
    assert len(rows1) == 2 * 2 * 300 * (3 * 4 + 2)  # scenarios x reps x (ε x DP methods + 2)
    assert rows1["estimate"].nunique() > 100
    assert set(metrics1["method"]) == {"Ori", "MS", "MODIPS", "LAP", "MD", "BB-MR"}


def test_rerun_of_a_completed_sweep_skips_every_task(serial):
    cfg, rows, metrics = serial
    files = _task_files(sweep_dir(cfg))
    assert len(files) == 72
    mtimes = {p: p.stat().st_mtime_ns for p in files}
    t0 = time.perf_counter()
    summary = run_sweep(cfg, progress=False)
    elapsed = time.perf_counter() - t0
    assert (summary.n_tasks, summary.skipped, summary.ran, summary.failed) == (72, 72, 0, [])
    assert elapsed < 5.0, f"re-run of a finished sweep took {elapsed:.1f} s"
    assert {p: p.stat().st_mtime_ns for p in _task_files(sweep_dir(cfg))} == mtimes
    assert_frame_equal(_rows(cfg), rows, check_exact=True)
    assert_frame_equal(aggregate(cfg), metrics, check_exact=True)


def test_adding_methods_leaves_other_methods_rows_unchanged(serial, tmp_path):
    _, rows_all, metrics_all = serial
    keep = ["LAP", "MD"]
    for i, methods in enumerate(("[LAP,MD]", "[MD,LAP]")):
        cfg = _load(SMALL, tmp_path / str(i), "executor.n_jobs=1", f"methods={methods}")
        assert run_sweep(cfg, progress=False).n_tasks == 2 * 2 * 3 * 2
        rows = _rows(cfg)
        assert set(rows["method"]) == set(keep)
        for label in keep:
            want = rows_all[rows_all["method"] == label].reset_index(drop=True)
            got = rows[rows["method"] == label].reset_index(drop=True)
            assert len(got) == 2 * 2 * 300 * 3
            assert_frame_equal(got, want, check_exact=True)
        want = metrics_all[metrics_all["method"].isin(keep)].reset_index(drop=True)
        assert_frame_equal(aggregate(cfg), want, check_exact=True)


def test_seed_decides_the_numbers(serial, tmp_path):
    cfg_a, rows_a, _ = serial
    sub = ["executor.n_jobs=1", "methods=[Ori,LAP]"]
    default = rows_a[rows_a["method"].isin(["Ori", "LAP"])].reset_index(drop=True)
    # another seed in the same sweep directory is refused (its manifest, metrics, tables and
    # figures would replace the first sweep's); under its own sweep name nothing is reused
    with pytest.raises(ConfigError, match=r"seed \(20200501 there, 7 here\)"):
        run_sweep(_load(SMALL, cfg_a["out_dir"], *sub, "seed=7"), progress=False)
    cfg_b = _load(SMALL, cfg_a["out_dir"], *sub, "seed=7", "sweep=seed7")
    summary = run_sweep(cfg_b, progress=False)
    assert summary.skipped == 0 and summary.ran == summary.n_tasks
    rows_b = _rows(cfg_b)
    assert len(rows_b) == len(default)
    for label in ("Ori", "LAP"):  # data stream (Ori) and method stream (LAP) both change
        a = default.loc[default["method"] == label, "estimate"].to_numpy()
        b = rows_b.loc[rows_b["method"] == label, "estimate"].to_numpy()
        assert (a != b).mean() > 0.5
    # the same seed in a fresh directory reproduces seed 7's numbers exactly
    cfg_c = _load(SMALL, tmp_path, *sub, "seed=7")
    run_sweep(cfg_c, progress=False)
    assert_frame_equal(_rows(cfg_c), rows_b, check_exact=True)
    # and the default seed's rows in the shared directory are untouched
    assert_frame_equal(_rows(cfg_a), rows_a, check_exact=True)


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """BIG on two loky workers in a fresh process, killed with SIGKILL once 5 task files are
    stored: the sweep's process alone (not its process group, as ``kill -9 <pid>`` or the OOM
    killer would), so that its workers must stop by themselves. One killed sweep serves both
    tests below (each used to start and kill a sweep of its own, 7 CPU-s each): the first checks
    that no worker outlives it, the second resumes it. Returns (config, process, finished early,
    worker pids, pids still alive 10 s after the kill, task files once the workers are gone, the
    same a second later)."""
    out = tmp_path_factory.mktemp("killed")
    cfg = _load(BIG, out, "executor.n_jobs=2")
    root = sweep_dir(cfg)
    code_version.cache_clear()  # hash the sources as they are now, like the subprocess will
    log = open(out / "run.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", *BIG, "executor.n_jobs=2", f"out_dir={out}"],
        cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    workers = set()
    try:
        deadline = time.monotonic() + 120
        while len(_task_files(root)) < 5 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        finished_early = proc.poll() is not None
        if not finished_early:
            workers = _descendants(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _alive(workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = _alive(workers)
        done = _task_files(root)
        time.sleep(1.0)
        later = _task_files(root)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    return cfg, proc, finished_early, workers, survivors, done, later


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_workers_of_a_killed_sweep_stop_with_it(killed):
    """SIGKILL of the sweep's process alone (not its process group): its loky workers and their
    resource tracker must not live on and keep writing task files."""
    cfg, proc, finished_early, workers, survivors, done, later = killed
    assert not finished_early, "the sweep finished before it could be killed"
    assert len(workers) >= 2, workers  # two loky workers (and loky's resource tracker)
    assert later == done, "task files are still being written"
    assert not survivors, f"{len(survivors)} of {len(workers)} worker processes outlived the sweep"
    assert len(done) < 2 * 2 * 3 * 6


def test_resume_after_sigkill_gives_the_uninterrupted_results(killed, tmp_path):
    cfg_a, proc, finished_early, _, _, done, later = killed
    root_a = sweep_dir(cfg_a)
    assert not finished_early, (root_a.parents[1] / "run.log").read_text()[-2000:]
    assert proc.returncode == -signal.SIGKILL
    code_version.cache_clear()
    if (json.loads((root_a / "manifest.json").read_text())["code_version"]
            != code_version(cfg_a["study"]["module"])):
        pytest.skip("sources under harness/ or experiments/ changed while this test ran")
    # no worker goes on writing after the kill: the store stops changing
    assert later == done
    n_tasks = 2 * 2 * 3 * 6
    assert 5 <= len(done) < n_tasks
    # every task file is complete (writes are atomic); leftover .tmp-* files are not task files
    for path in done:
        part = pd.read_parquet(path)
        assert len(part) > 0 and "estimate" in part.columns
    leftovers = [p.name for p in (root_a / "tasks").iterdir() if p.name.startswith(".tmp-")]
    assert all(p.name not in leftovers for p in done)

    summary = run_sweep(cfg_a, progress=False)
    assert summary.failed == []
    assert summary.n_tasks == n_tasks
    assert summary.skipped == len(done) > 0
    assert summary.ran == n_tasks - len(done)

    cfg_b = _load(BIG, tmp_path / "B", "executor.n_jobs=2")
    assert run_sweep(cfg_b, progress=False).ran == n_tasks
    rows_a, rows_b = read_rows(cfg_a), read_rows(cfg_b)
    assert_frame_equal(aggregate(cfg_a, rows_a), aggregate(cfg_b, rows_b), check_exact=True)
    assert_frame_equal(rows_a, rows_b, check_exact=True)
    assert stored_files(root_a) == stored_files(sweep_dir(cfg_b))


def test_a_worker_whose_sweep_is_already_gone_exits_before_running_anything():
    """A loky worker still starting when the sweep is killed reaches its first task after its
    parent is gone: it must exit at once instead of running the task. The sweep's own process
    (n_jobs=1) and dask workers (owner None) are never stopped: checked first, in the same
    process (one interpreter start instead of two)."""
    code = ("import os\nfrom harness.engine.sweep import _stop_with_owner\n"
            "_stop_with_owner(os.getpid()); _stop_with_owner(None); print('kept running')\n"
            "_stop_with_owner(2 ** 22 + 12345)\n"  # not this process's parent
            "print('ran the task')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 70, proc.stderr[-2000:]
    assert "kept running" in proc.stdout and "ran the task" not in proc.stdout
