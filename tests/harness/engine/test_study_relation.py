"""``study.relation`` (issue 24 item 3): a study calibrates every method under one neighbour
relation, rows carry the relation and δ of their method's ledger, a method without a
calibration under the relation is refused in one line before anything runs, and the default
leaves every method's own relation (and the task fingerprints) as they were. STEPS's
PrivBayes beside STEPS and UH under add/remove is the case of issue 25 item 3."""

import numpy as np
import pytest
from study_helpers import assert_bad_run_input

from harness.config import load
from harness.data import Original
from harness.engine.grid import Task, plan_tasks
from harness.engine.study import load_study
from harness.engine.task import run_task

SMALL = ["study=steps_sim", "profile=ci", "study.grid.model=[main_effect]",
         "study.grid.n=[300]", "study.epsilon=[1]"]


def _study(*extra):
    cfg = load([*SMALL, *extra, "out_dir=/tmp/unused-relation"])
    return cfg, load_study(cfg["study"])


def _rows(cfg, study, method):
    task = Task(study.name, (("model", "main_effect"), ("n", 300)), 0, 2, 2, method, "test")
    return run_task(study, task, cfg).rows


@pytest.mark.parametrize("relation", [None, "add/remove", "substitution"])
def test_steps_sim_methods_are_calibrated_under_the_study_relation(relation):
    cfg, study = _study(*([] if relation is None else [f"study.relation={relation}"]))
    own = {"STEPS": "add/remove", "UH-mod": "add/remove", "PrivBayes": "substitution"}
    for label, default in own.items():
        rows = _rows(cfg, study, label)
        assert set(rows["relation"]) == {relation or default}
        assert set(rows["delta"]) == {0.0}
    ori = _rows(cfg, study, "Ori")
    assert set(ori["relation"]) == {""} and ori["delta"].isna().all()


def test_privbayes_under_add_remove_halves_the_count_noise_at_the_same_epsilon():
    scales = {}
    for relation in ("add/remove", "substitution"):
        cfg, study = _study(f"study.relation={relation}")
        scenario = {"model": "main_effect", "n": 300}
        data = Original.of(study.generate(scenario, np.random.default_rng(0), 1)).train
        rel = study.synthesizer("PrivBayes", scenario).release(
            data, 1.0, np.random.default_rng(1))
        assert rel.ledger.total_epsilon() == pytest.approx(1.0, rel=1e-12)
        scales[relation] = [e.scale for e in rel.ledger.entries if e.mechanism == "laplace"]
    np.testing.assert_allclose(scales["substitution"], 2 * np.array(scales["add/remove"]),
                               rtol=1e-12)


def test_an_unset_relation_is_not_part_of_a_tasks_identity():
    """An unset relation (null, the default) fingerprints as a config without the key, as
    before the key existed; a set one changes every task's identity (no stale rows reused)."""
    cfg, study = _study()
    base = [t.file_id for t in plan_tasks(study, cfg, "v")]
    cfg_ar, study_ar = _study("study.relation=add/remove")
    assert [t.file_id for t in plan_tasks(study_ar, cfg_ar, "v")] != base
    cfg_explicit = dict(cfg, study={k: v for k, v in cfg["study"].items()
                                    if k not in ("relation", "delta")})
    assert [t.file_id for t in plan_tasks(study, cfg_explicit, "v")] == base


@pytest.mark.parametrize("overrides, words", [
    (["study=example_survey", "study.relation=add/remove"],
     ["study.relation", "ExpSynth (example_exp_records)", "no calibration under add/remove",
      "supports: substitution"]),
    (["study=hu_savitsky_williams_single", "study.relation=add/remove"],
     ["study.relation", "FBS (fbs)", "supports: substitution"]),
    (["study.relation=both"], ["study.relation", "'both'", "add/remove, substitution"]),
    (["study.delta=0"], ["study.delta", "(0, 1)"]),
])
def test_a_relation_a_method_cannot_take_is_refused_in_one_line(tmp_path, overrides, words):
    assert_bad_run_input(tmp_path / "out", ["profile=ci", *overrides], words)
