"""Consecutive tasks of one block share the block's original data (harness/engine/task.py
``_generate``): the study draws it once, every task gets the values a fresh draw gives, and a
method that writes into its input cannot reach the next task's data."""

import numpy as np

from harness import config
from harness.data import Original
from harness.engine import task as task_mod
from harness.engine.grid import plan_tasks
from harness.engine.study import load_study


def _setup(monkeypatch):
    cfg = config.load(["study=bowen_liu_sim1", "profile=ci"])
    study = load_study(cfg["study"])
    tasks = plan_tasks(study, cfg, "v")
    calls = []
    real = study.generate
    monkeypatch.setattr(study, "generate", lambda *a: calls.append(a) or real(*a))
    monkeypatch.setattr(task_mod, "_LAST_DRAW", {})
    return cfg, study, tasks, calls


def _train(study, cfg, t):
    return Original.of(task_mod._generate(study, t.scenario_dict,
                                          task_mod.scenario_key(t.scenario_dict),
                                          cfg["seed"], t)).train.counts  # Simulation 1: counts


def test_a_block_is_drawn_once_and_each_task_gets_its_own_copy(monkeypatch):
    cfg, study, tasks, calls = _setup(monkeypatch)
    first, second = [t for t in tasks
                     if (t.scenario, t.block) == (tasks[0].scenario, tasks[0].block)][:2]
    assert first.method != second.method
    a = _train(study, cfg, first)
    fresh = np.array(a, copy=True)
    a[...] = -1.0  # a method that overwrites its input
    b = _train(study, cfg, second)
    assert len(calls) == 1
    np.testing.assert_array_equal(b, fresh)
    # another block (or seed) is drawn again, and its data differ
    other = next(t for t in tasks if (t.scenario, t.block) != (first.scenario, first.block))
    c = _train(study, cfg, other)
    assert len(calls) == 2 and not np.array_equal(np.asarray(c), fresh)
