"""The study contract end to end, on the worked example (experiments/example/survey), which uses
together: weights and strata, a hold-out part, metric evaluations that read the original data, a
model release, nested m in {1, 3, 5}, a privacy axis other than ε and the exponential mechanism.
It runs through harness run, aggregate, claims and check."""

import numpy as np
import pandas as pd
import pytest
from study_helpers import cli_main

from harness import config
from harness.data import Original
from harness.engine.study import load_study
from harness.privacy import PrivacyLedger, audit_mechanism
from harness.privacy.ledger import SUBSTITUTION

STUDY = "example_survey"


@pytest.fixture(scope="module")
def sweep(ci_sweep_of):
    return ci_sweep_of(STUDY)


def test_rows_carry_privacy_value_realised_epsilon_and_nested_m(sweep):
    cfg, rows, metrics = sweep
    exp = rows[rows["method"] == "ExpSynth"]
    assert sorted(exp["m"].unique()) == [1, 3, 5]
    # realised ε = m · max_h n_h · ε_draw, n_h = n − round(0.2 n) training records per stratum
    n_train = exp["n_per_stratum"] - (0.2 * exp["n_per_stratum"]).round()
    np.testing.assert_allclose(exp["epsilon"], exp["m"] * n_train * exp["privacy"], rtol=1e-12)
    np.testing.assert_allclose(exp["log_epsilon"], np.log(exp["epsilon"]), rtol=1e-12)
    model = metrics[metrics["method"] == "PrivMode"]
    np.testing.assert_allclose(model["epsilon"], model["privacy"], rtol=1e-12)  # m = 1
    ori = rows[rows["method"] == "Ori"]
    assert ori["privacy"].isna().all() and ori["epsilon"].isna().all()
    # the model release is read by the hold-out evaluation only
    assert set(model["metric"]) >= {"holdout_accuracy"}
    assert "PrivMode" not in set(rows["method"])
    # the metric evaluations give one row per (replicate, privacy, m): nested m too
    acc = metrics[(metrics["metric"] == "holdout_accuracy") & (metrics["method"] == "ExpSynth")]
    assert sorted(acc["m"].unique()) == [1, 3, 5]
    assert (acc["n_rep"] == cfg["n_replicates"]).all()


def test_nested_m_pools_the_first_sets_of_one_release(sweep):
    """m = 1 is the first set alone (T = W, z interval); m = 5 pools all five: the pooled
    estimate at m = 1 is one of the five, and B is undefined at m = 1."""
    _, rows, _ = sweep
    exp = rows[(rows["method"] == "ExpSynth") & (rows["estimand"] == "share_low")]
    one = exp[exp["m"] == 1]
    assert one["between"].isna().all() and np.isinf(one["df"]).all()
    np.testing.assert_allclose(one["variance"], one["within"])
    five = exp[exp["m"] == 5]
    assert (five["between"] >= 0).all()
    # the same replicates: every pooled (m = 5) estimate differs from the first set's
    key = ["n_per_stratum", "privacy", "replicate"]
    both = one.merge(five, on=key, suffixes=("_1", "_5"))
    assert len(both) == len(one) and (both["estimate_1"] != both["estimate_5"]).mean() > 0.9


def test_ori_is_unbiased_for_the_weighted_population_shares(sweep):
    """The stratified estimator on the original sample: |bias| within 3 MCSE of 0 for every
    share (the frame's weighted shares are the truth)."""
    _, _, metrics = sweep
    b = metrics[(metrics["method"] == "Ori") & (metrics["metric"] == "bias")]
    assert len(b) == 6
    assert (b["value"].abs() < 3 * b["mcse"]).all(), b[["scenario", "estimand", "value", "mcse"]]
    truth = b.groupby("estimand")["truth"].first()
    frame = pd.read_csv("experiments/example/data/frame.csv")
    w = frame.groupby("y")["weight"].sum() / frame["weight"].sum()
    np.testing.assert_allclose(truth.sort_index().to_numpy(),
                               w.rename(lambda k: f"share_{k}").sort_index().to_numpy())


def test_cli_run_aggregate_claims_and_check(sweep, tmp_path):
    cfg, _, _ = sweep
    args = [f"study={STUDY}", "profile=ci", f"out_dir={cfg['out_dir']}"]
    status, out, err = cli_main("run", *args)
    assert status == 0 and " already done, 0 run, 0 failed" in out, out + err
    status, out, _ = cli_main("aggregate", *args)
    assert status == 0 and "metrics:" in out
    status, out, _ = cli_main("claims", *args)
    assert status == 0
    assert "4 claims: 4 PASS, 0 FAIL, 0 UNDECIDED" in out, out
    # against the committed snapshot (made on another CPU): the statistical mode, as CI runs it
    status, out, err = cli_main("check", *args)
    assert status == 0 and "check statistical: PASS" in out, out[-2000:] + err
    # exact mode is a promise on one machine: a snapshot of this run, then bit for bit against it
    own = ["--reference-dir", str(tmp_path)]
    assert cli_main("check", "--update", *own, *args)[0] == 0
    status, out, err = cli_main("check", "--mode", "exact", *own, *args)
    assert status == 0 and "check exact: PASS" in out, out[-2000:] + err
    status, out, _ = cli_main("list", "estimands", *args)
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == 2 * 3  # 2 scenarios x (1 interval + 2 metric evaluations)
    assert "'share_high'" in lines[0] and "metrics of holdout_accuracy: holdout_accuracy" in out


def test_each_release_spends_exactly_what_it_claims_under_substitution():
    cfg = config.load([f"study={STUDY}", "profile=ci"])
    study = load_study(cfg["study"])
    scenario = {"n_per_stratum": 60}
    original = Original.of(study.generate(scenario, np.random.default_rng(1), 4))
    for label, expected in (("ExpSynth", 5 * 48 * 0.01), ("PrivMode", 0.01)):
        release = study.method(label, scenario).release(original.train, 0.01,
                                                        np.random.default_rng(2))
        assert release.ledger.total_epsilon() == pytest.approx(expected, rel=1e-12)
        assert release.epsilon == expected
        assert release.ledger.relations() == (SUBSTITUTION,)
        for m in range(1, release.m + 1):
            assert release.realised_epsilon(m) == pytest.approx(expected * m / release.m)
            assert release.first_sets(m).m == m


def test_the_private_mode_passes_the_audit_on_neighbours_and_a_doubled_budget_fails():
    """Neighbours differ in one record of one stratum (substitution: a 'low' becomes a 'mid');
    the audited output is the label of that stratum. The claimed ε holds; a release that spends
    2ε while claiming ε is caught."""
    cfg = config.load([f"study={STUDY}", "profile=ci"])
    study = load_study(cfg["study"])
    scenario = {"n_per_stratum": 60}
    data = Original.of(study.generate(scenario, np.random.default_rng(3), 1)).train
    y = data.schema.names.index("y")
    counts = np.bincount(data.values[0, data.strata[0] == 0, y].astype(int), minlength=3)
    # make the top two levels of stratum 0 tie-adjacent so the change matters most
    values = data.values.copy()
    in0 = np.flatnonzero(data.strata[0] == 0)
    values[0, in0, y] = np.r_[np.zeros(24), np.ones(24)][: in0.size]
    x = type(data)(values, None, 1, data.columns, data.weights, data.strata, data.schema)
    values2 = values.copy()
    values2[0, in0[0], y] = 1  # one record changed
    x2 = type(data)(values2, None, 1, data.columns, data.weights, data.strata, data.schema)
    assert counts.sum() == in0.size
    synth = study.method("PrivMode", scenario)
    eps = 1.0

    def sample(spend):
        def draw(d, rng, size):
            batch = type(d)(np.repeat(d.values, size, axis=0), None, 1, d.columns,
                            np.repeat(d.weights, size, axis=0), np.repeat(d.strata, size, axis=0),
                            d.schema)
            return synth.release(batch, spend, rng).sets.labels[:, 0, 0].astype(float)
        return draw

    # 25,000 samples per data set (was 100,000): the loss on the chosen event is ~0.62 (bound
    # 0.578 here, SD ~0.02; 0.601 at 100,000) and the release at 4ε gives 3.20 (SD ~0.07; 3.28
    # at 100,000) against the claimed 1: both verdicts stay > 20 SD from the threshold
    ok = audit_mechanism(sample(eps), x, x2, claimed_epsilon=eps, n_samples=25_000,
                         rng=np.random.default_rng(4))
    assert ok.passed, ok.summary()
    bad = audit_mechanism(sample(4 * eps), x, x2, claimed_epsilon=eps, n_samples=25_000,
                          rng=np.random.default_rng(5))
    assert not bad.passed, bad.summary()
    assert PrivacyLedger  # the ledger type the releases use
