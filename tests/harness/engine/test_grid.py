"""Grid expansion, blocks, task keys and task identity."""

import numpy as np

from harness import config
from harness.engine.grid import blocks, expand_grid, plan_tasks, scenario_key
from harness.engine.study import load_study


def test_expand_grid_is_the_ordered_cartesian_product():
    g = expand_grid({"n": [40, 100], "pi": [0.1, 0.5, 0.25]})
    assert len(g) == 6
    assert g[0] == {"n": 40, "pi": 0.1} and g[-1] == {"n": 100, "pi": 0.25}
    assert g[1] == {"n": 40, "pi": 0.5}  # last axis varies fastest, values in given order


def test_blocks_cover_every_replicate_once():
    assert blocks(1000, 300) == [(0, 300), (1, 300), (2, 300), (3, 100)]
    assert blocks(500, 500) == [(0, 500)]
    assert sum(r for _, r in blocks(4999, 250)) == 4999


def test_scenario_key_reads_numpy_scalars_as_python_numbers():
    assert scenario_key({"n": 40, "pi": 0.1}) == "n=40,pi=0.1"
    assert scenario_key({"n": np.int64(40), "pi": np.float64(0.1)}) == "n=40,pi=0.1"


def _plan(*overrides):
    cfg = config.load(["profile=ci", "study.grid.n=[40]", "study.grid.pi=[0.5]", *overrides])
    return plan_tasks(load_study(cfg["study"]), cfg, "code")


def test_task_identity_tracks_what_rows_depend_on():
    base = {t.key: t.file_id for t in _plan()}
    assert len(base) == 12  # 2 blocks x 6 methods
    assert "bowen_liu_sim1/n=40,pi=0.5/block=1/LAP" in base
    assert {t.key: t.file_id for t in _plan()} == base  # stable
    seed = {t.key: t.file_id for t in _plan("seed=1")}
    assert all(seed[k] != v for k, v in base.items())
    # a changed LAP parameter changes only LAP's tasks
    lap = {t.key: t.file_id for t in _plan("study.roster.LAP.sensitivity=2")}
    changed = {k for k in base if lap[k] != base[k]}
    assert changed == {k for k in base if k.endswith("/LAP")}
    # the replicate count changes only the last, shorter block
    more = {t.key: t.file_id for t in _plan("study.replicates.ci=900")}
    assert more["bowen_liu_sim1/n=40,pi=0.5/block=0/MD"] == base[
        "bowen_liu_sim1/n=40,pi=0.5/block=0/MD"
    ]
    assert more["bowen_liu_sim1/n=40,pi=0.5/block=1/MD"] != base[
        "bowen_liu_sim1/n=40,pi=0.5/block=1/MD"
    ]
