"""A sweep's identity is compared in its manifest's JSON form: a config whose settings hold a
mapping with integer keys resumes its own sweep (the manifest stores the keys as strings), and a
changed value under such a key is still refused."""

import pytest

from harness import config
from harness.engine.sweep import run_sweep
from harness.errors import ConfigError

TINY = ["study=bi_shen_s1", "profile=ci", "study.replicates.ci=2", "study.grid.n=[30]",
        "study.grid.dist=[poisson]", "study.epsilon=[1]", "methods=[LRM]", "executor.n_jobs=1"]


def _config(out, grid):
    cfg = config.load([*TINY, f"out_dir={out}"])
    cfg["study"]["roster"]["LRM"]["round_to"] = {0: grid}  # an integer-keyed mapping
    return cfg


def test_a_sweep_with_integer_mapping_keys_resumes(tmp_path):
    first = run_sweep(_config(tmp_path, [0, 1, 2, 3]), progress=False)
    assert first.ran == first.n_tasks == 1
    again = run_sweep(_config(tmp_path, [0, 1, 2, 3]), progress=False)
    assert again.skipped == 1 and again.ran == 0
    with pytest.raises(ConfigError, match=r"other settings: roster\.LRM"):
        run_sweep(_config(tmp_path, [0, 1, 2]), progress=False)


def test_a_run_under_other_code_says_that_the_earlier_tasks_are_not_reused(
        tmp_path, monkeypatch, capsys):
    """A resume is keyed by the code's hash: a run with other row-making code (an edit, or the
    wrong checkout) recomputes every task. It says so, naming both versions, before it runs."""
    import harness.engine.sweep as sweep

    cfg = _config(tmp_path, [0, 1, 2, 3])
    run_sweep(cfg, progress=False)
    again = run_sweep(cfg, progress=False)
    assert again.ran == 0 and "notice" not in capsys.readouterr().err  # same code: reused
    made_by = sweep.code_version(sweep.study_module(cfg))
    monkeypatch.setattr(sweep, "code_version", lambda module=None: "0.0.0+other")
    other = run_sweep(cfg, progress=False)
    assert other.ran == 1 and other.skipped == 0
    err = capsys.readouterr().err
    assert f"holds 1 task made by code {made_by}; this code is 0.0.0+other" in err
    assert "none of them is reused: this run computes 1 task " in err
    run_sweep(cfg, progress=False)  # the manifest now names this code: no notice
    assert "notice" not in capsys.readouterr().err


def test_a_worker_whose_code_differs_from_the_sweeps_fails_its_task_and_stores_nothing(tmp_path):
    """A worker started after the sources were edited mid-sweep (loky replaces a dead one) would
    store rows of the new code under the old code's task name; it fails the task instead."""
    from harness.engine.grid import plan_tasks
    from harness.engine.store import SweepStore
    from harness.engine.study import load_study
    from harness.engine.sweep import code_version, execute_task, study_module

    cfg = _config(tmp_path, [0, 1, 2, 3])
    version = code_version(study_module(cfg))
    (task,) = plan_tasks(load_study(cfg["study"]), cfg, version)
    store = SweepStore(tmp_path / "store")
    outcome = execute_task(cfg, task, str(store.root), version="0.0.0+other")
    assert not outcome["ok"] and f"worker's code is {version}, the sweep's 0.0.0+other" in (
        outcome["error"])
    assert not store.task_path(task).exists()
    assert execute_task(cfg, task, str(store.root), version=version)["ok"]
    assert store.task_path(task).exists()
