"""The data interfaces of the studies added to the benchmark (issue 24 item 2): each study's
original data round-trip through its declared coding (every released value back in its own
bin or level), its headline metrics are metrics its evaluations report, a coded-records
release (PrivBayes) runs through the study's own evaluations, and ``harness benchmark`` ranks
PrivBayes beside the study's reference methods."""

import numpy as np
import pandas as pd
import pytest

from harness.benchmark.command import parse_args, plan
from harness.cli import main
from harness.data import CountBatch, Original
from harness.engine.grid import expand_grid
from harness.engine.study import load_study
from harness.evaluation import MetricEvaluation
from harness.schema import Categorical

NEW = ("bowen_liu_fertility", "example_survey", "bi_shen_s3", "bi_shen_s4", "bi_shen_s5",
       "bi_shen_r1", "bi_shen_r2", "bi_shen_r3")


@pytest.fixture(scope="module")
def planned():
    """study → (study object, its first scenario, its benchmark config) at profile=ci."""
    runs, skipped = plan(parse_args(["methods=[privbayes]", f"studies=[{','.join(NEW)}]",
                                     "profile=ci", "replicates=2", "scenarios=first"]))
    assert skipped == []  # every new study takes coded records
    out = {}
    for r in runs:
        study = load_study(r["config"]["study"])
        out[r["study"]] = (study, expand_grid(study.grid_axes())[0], r["bench"])
    assert set(out) == set(NEW)
    return out


@pytest.mark.parametrize("name", NEW)
def test_original_data_round_trip_through_the_coding(planned, name):
    """decode(encode(x)) re-encodes to the same codes (every value back in its bin or on its
    level, the records' count kept), and columns coded exactly (categorical, public levels)
    come back equal."""
    study, scenario, _ = planned[name]
    train = Original.of(study.generate(scenario, np.random.default_rng(0), 1)).train
    face = study.synthesizer("privbayes", scenario).interface
    layout = face.layout(train)
    coded = face.encode(train, layout)
    assert all(isinstance(c, Categorical) for c in layout.coded_schema.columns)
    back = face.decode(coded.with_set_axis(), layout, np.random.default_rng(1))
    assert type(back) is type(train) and not isinstance(back, CountBatch)
    again = face.encode(back, layout)
    np.testing.assert_array_equal(again.values[:, 0], coded.values)
    exact = [j for j, c in enumerate(layout.schema.columns) if j not in layout.numeric]
    np.testing.assert_array_equal(back.values[:, 0][..., exact], train.values[..., exact])
    if train.strata is not None:
        np.testing.assert_array_equal(back.strata[:, 0], train.strata)


@pytest.mark.parametrize("name", NEW)
def test_headline_metrics_are_the_study_s_own(planned, name):
    study, _, bench = planned[name]
    reported = {n for ev in study.evaluations() if isinstance(ev, MetricEvaluation)
                for n in ev.names}
    assert set(bench.get("headline") or {}) <= reported


# S4: PrivBayes's greedy network over p = 100 coded columns takes ~100 s per release here
@pytest.mark.parametrize("name", [s for s in NEW if s != "bi_shen_s4"])
def test_a_coded_release_runs_through_the_study_s_evaluations(planned, name):
    study, scenario, bench = planned[name]
    original = Original.of(study.generate(scenario, np.random.default_rng(2), 1))
    synth = study.synthesizer("privbayes", scenario)
    privacy = study.privacy_values()[0]
    release = synth.release(original.train, privacy, np.random.default_rng(3))
    assert release.epsilon == pytest.approx(synth.epsilon_per_privacy * privacy)
    assert release.sets.n == original.train.n
    values = {}
    for ev in study.evaluations_for("privbayes"):
        if isinstance(ev, MetricEvaluation):
            values.update(ev.metrics(original, release, scenario))
    for metric in bench.get("headline") or {}:
        assert np.all(np.isfinite(values[metric])), metric


def test_benchmark_ranks_privbayes_on_the_new_studies_of_three_papers(tmp_path):
    studies = ["bowen_liu_fertility", "example_survey", "bi_shen_s5"]
    assert main(["benchmark", "methods=[privbayes]", f"studies=[{','.join(studies)}]",
                 "profile=ci", "replicates=3", "scenarios=first", "executor.n_jobs=1",
                 f"out_dir={tmp_path}"]) == 0
    root = tmp_path / "benchmark" / "ci-r3-first"
    lead = pd.read_csv(root / "leaderboard.csv")
    ours = lead[lead.method == "privbayes"]
    assert set(ours.study) == set(studies)
    assert {"consistency_rate", "tvd_8", "l2_error", "tvd_to_original"} <= set(ours.metric)
    assert ours["rank"].notna().any()
    assert {"Ori", "LAP", "MODIPS", "ExpSynth", "NP", "DIP"} <= set(lead.method)
    face = pd.read_csv(root / "interface.csv").set_index("study")
    assert face.loc["example_survey", "strata"] == "yes"
    assert face.loc["example_survey", "weights"] == "ignored"
    assert face.loc["bowen_liu_fertility", "binned"] == "age, hours"
