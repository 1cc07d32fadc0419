"""Damaged sweeps through the command line (DESIGN §6): a damaged task file is reported in one
line, moved aside and run again, and nothing reads results older than the task files; two
configs never share a sweep directory; an executor that cannot start touches nothing of an
earlier run."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal
from study_helpers import cli_main

from harness import config
from harness.engine import executor as executor_mod
from harness.engine.sweep import sweep_dir

G = ["study=bowen_liu_sim1", "profile=ci", "study.grid.n=[40]", "study.grid.pi=[0.1]",
     "study.replicates.ci=200", "block_size=100", "study.log_epsilon=[-1,1]",
     "executor.n_jobs=1"]
N_TASKS = 2 * 6  # blocks x methods


def _tree(root: Path) -> dict:
    """Every file under ``root`` with its bytes and modification time."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The small sweep, run once for the file through the command line (run and report)."""
    out = tmp_path_factory.mktemp("finished")
    status, _, err = cli_main("run", *G, f"out_dir={out}")
    assert status == 0, err
    return out


@pytest.fixture
def sweep(finished, tmp_path):
    """A finished small sweep of the test's own: a copy of the file's (every file with its bytes
    and modification time; the out_dir is no part of a sweep's identity), so that each test
    damages its own sweep without running it again (each test ran it, 2-3 CPU-s, with its
    report). Its config, directory, metrics and task files."""
    shutil.copytree(finished / "bowen_liu_sim1", tmp_path / "bowen_liu_sim1")
    cfg = config.load([*G, f"out_dir={tmp_path}"])
    root = sweep_dir(cfg)
    files = sorted((root / "tasks").glob("*.parquet"))
    assert len(files) == N_TASKS
    return cfg, root, pd.read_parquet(root / "metrics.parquet"), files


def _one_line_error(status, err, *words):
    assert status == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    for w in words:
        assert w in err, err


def test_truncated_task_file_is_reported_moved_aside_and_run_again(sweep):
    cfg, root, metrics, files = sweep
    original = files[3].read_bytes()
    files[3].write_bytes(original[:1000])  # `truncate -s 1000`
    status, out, err = cli_main("run", *G, f"out_dir={cfg['out_dir']}")
    assert status == 0, err
    damaged = [line for line in err.splitlines() if line.startswith("damaged: ")]
    assert len(damaged) == 1 and "unreadable footer" in damaged[0], err
    assert f"{N_TASKS} tasks: {N_TASKS - 1} already done, 1 run (1 damaged" in out
    assert files[3].read_bytes() == original  # re-run bit for bit
    moved = [p.read_bytes() for p in (root / "damaged").glob(f"*/rows/{files[3].name}")]
    assert moved == [original[:1000]]
    assert_frame_equal(pd.read_parquet(root / "metrics.parquet"), metrics, check_exact=True)


@pytest.mark.parametrize("command", ["aggregate", "claims", "table", "plot"])
def test_reading_a_damaged_file_is_one_line_and_the_next_run_repairs_it(sweep, command):
    cfg, root, metrics, files = sweep
    (root / "metrics.tasks").unlink()  # no cached aggregate: every command reads the rows
    data = bytearray(files[0].read_bytes())
    data[30] ^= 0xFF  # inside the first data page: the footer still vouches for the file
    files[0].write_bytes(bytes(data))
    status, _, err = cli_main(command, *G, f"out_dir={cfg['out_dir']}")
    _one_line_error(status, err, "unreadable", "moved to", "re-run the sweep")
    assert not files[0].exists()
    status, out, err = cli_main("run", *G, f"out_dir={cfg['out_dir']}")
    assert status == 0 and "1 run" in out, err
    assert_frame_equal(pd.read_parquet(root / "metrics.parquet"), metrics, check_exact=True)


def test_run_repairs_a_file_damaged_inside_its_pages_in_one_command(sweep):
    cfg, root, metrics, files = sweep
    data = bytearray(files[5].read_bytes())
    data[30] ^= 0xFF
    files[5].write_bytes(bytes(data))
    status, out, err = cli_main("run", *G, f"out_dir={cfg['out_dir']}")
    assert status == 0, err
    assert "damaged: " in err and "unreadable" in err
    assert out.count(" tasks: ") == 2  # the sweep ran once more for the damaged task
    assert_frame_equal(pd.read_parquet(root / "metrics.parquet"), metrics, check_exact=True)


def test_check_never_compares_metrics_older_than_the_task_files(sweep, tmp_path):
    cfg, root, metrics, files = sweep
    ref = tmp_path / "reference"
    args = [*G, f"out_dir={cfg['out_dir']}", "--reference-dir", str(ref)]
    assert cli_main("check", "--update", *args)[0] == 0
    # plant a stale aggregate: the cached metrics say something the task files do not
    stale = metrics.copy()
    stale.loc[stale["metric"] == "bias", "value"] += 1.0
    stale.to_parquet(root / "metrics.parquet", index=False)
    files[2].write_bytes(files[2].read_bytes()[:1000])  # and damage a task file
    status, out, err = cli_main("check", "--mode", "exact", *args)
    assert status == 0, out + err  # the damaged task ran again and the metrics were recomputed
    assert "damaged: " in err
    assert_frame_equal(pd.read_parquet(root / "metrics.parquet"), metrics, check_exact=True)


def test_a_second_config_in_the_same_sweep_directory_is_refused(sweep):
    cfg, root, _, _ = sweep
    before = _tree(root)
    status, _, err = cli_main("run", *G, f"out_dir={cfg['out_dir']}", "seed=7")
    _one_line_error(status, err, "seed (20200501 there, 7 here)", "sweep=<name>", str(root))
    status, _, err = cli_main("run", *G, f"out_dir={cfg['out_dir']}", "study.roster.LAP.m=3")
    _one_line_error(status, err, "roster.LAP")
    assert _tree(root) == before
    # a grown sweep (more replicates, another grid point, fewer methods) is the same sweep
    status, out, err = cli_main("run", *G, f"out_dir={cfg['out_dir']}", "study.replicates.ci=300",
                             "methods=[Ori,LAP]")
    assert status == 0 and f"{2 * 3}" in out, err
    # and a sweep of its own runs beside it
    status, _, err = cli_main("run", *G, f"out_dir={cfg['out_dir']}", "seed=7", "sweep=seed7")
    assert status == 0, err


def test_an_executor_that_cannot_start_touches_nothing_of_an_earlier_run(sweep, monkeypatch):
    pytest.importorskip("distributed")
    cfg, root, _, _ = sweep
    (root / "failures.jsonl").write_text(json.dumps({"key": "earlier"}) + "\n")
    before = _tree(root)
    monkeypatch.setattr(executor_mod, "_CONNECT_TIMEOUT", "1s")
    dask = [a for a in G if not a.startswith("executor.")]
    status, _, err = cli_main("run", *dask, f"out_dir={cfg['out_dir']}", "study.replicates.ci=300",
                           "executor=dask", "executor.address=tcp://127.0.0.1:1")
    _one_line_error(status, err, "executor.address", "cannot connect")
    assert _tree(root) == before
