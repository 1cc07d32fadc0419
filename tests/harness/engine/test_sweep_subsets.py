"""A sweep's aggregates, tables and figures cover every task it holds, whichever ``methods=``
subset the last command ran; a subset never erases another method's rows or outputs (issue 24
item 1)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from study_helpers import cli_main

SWEEP = ["study=bowen_liu_sim1", "profile=ci", "study.replicates.ci=200", "block_size=100",
         "study.grid.n=[100]", "study.grid.pi=[0.25]", "study.log_epsilon=[0,2]",
         "executor.n_jobs=1"]


def _run(out, *argv):
    status, stdout, err = cli_main("run", *SWEEP, f"out_dir={out}", *argv)
    assert status == 0, stdout + err
    return stdout


@pytest.fixture(scope="module")
def ori_lap(tmp_path_factory):
    """The sweep after ``methods=[Ori,LAP]``, run once for the file (two tests start from it)."""
    out = tmp_path_factory.mktemp("ori_lap")
    _run(out, "methods=[Ori,LAP]")
    return out


def _copy_of(ori_lap, tmp_path):
    """This test's own copy of the [Ori,LAP] sweep: every file with its bytes and mtime (the
    out_dir is no part of a sweep's identity)."""
    shutil.copytree(ori_lap / "bowen_liu_sim1", tmp_path / "bowen_liu_sim1")


def test_a_subset_adds_to_the_sweep_and_erases_nothing(ori_lap, tmp_path):
    root = tmp_path / "bowen_liu_sim1" / "ci"
    _copy_of(ori_lap, tmp_path)
    before = pd.read_parquet(root / "metrics.parquet")
    tasks_before = {p.name: p.read_bytes() for p in (root / "tasks").glob("*.parquet")}
    assert set(before["method"]) == {"Ori", "LAP"}

    out = _run(tmp_path, "methods=[MS]")
    assert "2 tasks: 0 already done, 2 run" in out  # MS's tasks only
    after = pd.read_parquet(root / "metrics.parquet")
    assert set(after["method"]) == {"Ori", "MS", "LAP"}
    # Ori's and LAP's rows are exactly those of the first run, in the roster's order
    kept = after[after["method"].isin(["Ori", "LAP"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, before, check_exact=True)
    assert list(pd.unique(after["method"])) == ["Ori", "MS", "LAP"]
    for name, data in tasks_before.items():
        assert (root / "tasks" / name).read_bytes() == data
    # the CSV covers all three; the tables and the figure were made again
    assert {"Ori", "MS", "LAP"} <= set(pd.read_csv(root / "metrics.csv")["method"])
    assert (root / "tables" / "supp_table_1.csv").exists()
    assert (root / "figures" / "figure2_main_text_pi.png").exists()
    manifest = json.loads((root / "manifest.json").read_text())
    assert list(manifest["roster"]) == ["Ori", "MS", "MODIPS", "LAP", "MD", "BB-MR"]
    assert len(manifest["tasks"]) == 6  # every task the sweep holds

    # claims read all of them: the command that reads the stored metrics agrees
    status, text, err = cli_main("claims", *SWEEP, f"out_dir={tmp_path}", "methods=[MS]")
    assert status == 0, err
    again = pd.read_parquet(root / "metrics.parquet")
    pd.testing.assert_frame_equal(again, after, check_exact=True)


def test_a_method_that_holds_a_scenario_in_part_is_left_out(tmp_path):
    """A grown grid: LAP holds n = 100 only; a later MS run over n = 100 and 200 aggregates LAP
    at n = 100, never at n = 200 (it has no rows there)."""
    root = tmp_path / "bowen_liu_sim1" / "ci"
    _run(tmp_path, "methods=[LAP]")
    _run(tmp_path, "methods=[MS]", "study.grid.n=[100,200]")
    metrics = pd.read_parquet(root / "metrics.parquet")
    lap = metrics[metrics["method"] == "LAP"]
    assert set(lap["n"]) == {100} and set(metrics[metrics["method"] == "MS"]["n"]) == {100, 200}


def test_a_damaged_file_of_a_method_not_in_the_run_is_moved_aside_and_left_out(ori_lap, tmp_path):
    root = tmp_path / "bowen_liu_sim1" / "ci"
    _copy_of(ori_lap, tmp_path)
    lap = json.loads((root / "manifest.json").read_text())["tasks"]
    assert any(k.endswith("/LAP") for k in lap)
    names = sorted((root / "tasks").glob("*.parquet"))
    for path in names:  # damage every task file of LAP (its rows carry its label)
        if b"LAP" in path.read_bytes():
            path.write_bytes(path.read_bytes()[:-40])
    status, stdout, err = cli_main("run", *SWEEP, f"out_dir={tmp_path}", "methods=[MS]")
    assert status == 0, stdout + err
    assert "damaged" in err and (root / "damaged").is_dir()
    metrics = pd.read_parquet(root / "metrics.parquet")
    assert set(metrics["method"]) == {"Ori", "MS"}  # LAP is no longer held in full
