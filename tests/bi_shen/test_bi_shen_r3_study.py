"""Bi & Shen R3 (MovieLens stand-in, matrix factorisation; Table 3) at profile=ci, on one shared
sweep: the claims give the verdicts of profile=paper, the tables hold every cell, every release
spends exactly its claimed ε, DIP's release-then-drop path equals Algorithm 1 on the kept rows in
distribution, and a bad configuration or a bad user file is one clear line with nothing
written."""

import numpy as np
import pytest
from study_helpers import assert_bad_run_input, assert_verdicts

from experiments.bi_shen.r3.claims import CLAIMS
from experiments.bi_shen.r3.data import GRID, HISTOGRAM, load_ratings_csv
from experiments.bi_shen.r3.tables import grid, table_3
from harness import config
from harness.data import Original
from harness.engine.study import load_study
from harness.errors import ConfigError
from harness.privacy.ledger import PrivacyLedger
from harness.synthesizers.dip import privatize_holdout
from harness.synthesizers.dip_transform import column_kind

#: dip-smaller-holdout: DIP's RMSE moves by thousandths between hold-out shares, UNDECIDED at
#: 5 and 10 partitions (PASS at the paper profile's 40); lrm-near-dip-eps4 compares two RMSEs
#: about 6 % apart against a 10 % band.
MAY_BE_UNDECIDED_AT_CI = ("dip-smaller-holdout", "lrm-near-dip-eps4")


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of("bi_shen_r3")


@pytest.fixture(scope="module")
def study():
    return load_study(config.load(["study=bi_shen_r3", "profile=ci"])["study"])


def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], "bi_shen_r3", MAY_BE_UNDECIDED_AT_CI, paper="bi_shen")


def test_tables_hold_every_cell(ci_run):
    mx = ci_run[2]
    g = grid(mx)
    print(g.to_string(index=False))
    assert len(g) == 4 + 6 * 4  # NP (repeated per ε) and DIP 15/25/35 %, LRM, OPM, EXM × 4 ε
    assert g["ours"].notna().all() and np.isfinite(g["ours"]).all()
    t = table_3(mx)
    assert list(t["paper"])[:4] == [1.03, 1.87, 2.61, 1.11]


@pytest.mark.parametrize("label", ["DIP_15", "DIP_25", "DIP_35", "LRM", "OPM"])
def test_each_release_spends_exactly_its_claimed_epsilon(study, label):
    scenario = {"data": "standin"}
    orig = Original.of(study.generate(scenario, np.random.default_rng(3), 1))
    synth = study.method(label, scenario)
    for eps in study.epsilons():
        release = synth.release(orig.train, eps, np.random.default_rng(4),
                                **({"parts": orig.parts} if synth.needs_parts else {}))
        entries = release.ledger.entries
        assert release.ledger.total_epsilon() == pytest.approx(eps, rel=1e-12)
        assert release.epsilon == eps and len(entries) == 1
        assert set(np.unique(release.sets.values)) <= set(GRID)


def test_exm_redraws_every_rating_spending_epsilon_per_draw(study):
    """EXM with the count score and Δ = the sample maximum (5): every training rating is redrawn
    from the observed values; the swept ε is each draw's (the paper's), so the release spends
    n_train·ε. With counts in the thousands every draw is the modal rating."""
    orig = Original.of(study.generate({"data": "standin"}, np.random.default_rng(3), 1))
    n = orig.train.values.shape[1]
    release = study.method("EXM", {"data": "standin"}).release(orig.train, 1.0,
                                                               np.random.default_rng(4))
    assert release.epsilon == n and release.ledger.total_epsilon() == pytest.approx(n)
    values, counts = np.unique(orig.train.values, return_counts=True)
    assert np.all(release.sets.values == values[np.argmax(counts)])


def test_partition_and_holdouts(study):
    z = study.ratings("standin")
    orig = Original.of(study.generate({"data": "standin"}, np.random.default_rng(5), 2))
    n_test = round(0.25 * len(z))
    assert orig.part("test").shape == (2, n_test, 3)
    n_train = len(z) - n_test
    assert orig.train.values.shape == (2, n_train, 1)
    for h in (0.15, 0.25, 0.35):
        m = round(h * n_train)
        assert orig.part(f"holdout_{round(100 * h)}").values.shape == (2, m, 1)
        assert orig.part(f"kept_{m}").sum(axis=1).tolist() == [n_train - m] * 2
    hist = np.array([np.mean(z[:, 2] == g) for g in GRID])
    np.testing.assert_allclose(hist, HISTOGRAM, atol=0.002)


def test_dip_release_then_drop_equals_algorithm_1_on_the_kept_rows(study):
    """The univariate DIP privatizes each record given the reference alone: privatizing every
    training rating and keeping the rows outside the hold-out (the study's path) gives the same
    distribution of released ratings as privatizing only those rows (Algorithm 1)."""
    orig = Original.of(study.generate({"data": "standin"}, np.random.default_rng(7), 1))
    synth = study.method("DIP_25", {"data": "standin"})
    m = orig.part("holdout_25").values.shape[1]
    kept = orig.part(f"kept_{m}")[0]
    kind = column_kind("c", {"kind": "discrete", "support": list(GRID), "a0": 0})
    a, b = [], []
    for s in range(20):
        rel = synth.release(orig.train, 1.0, np.random.default_rng(100 + s), parts=orig.parts)
        a.append(rel.sets.values[0, 0, kept, 0])
        out, _ = privatize_holdout(orig.train.values[:, kept], orig.part("holdout_25").values,
                                   (kind,), 1.0, np.random.default_rng(900 + s),
                                   PrivacyLedger(), np.zeros((1, 1), dtype=int))
        b.append(out[0, :, 0])
    a, b = np.concatenate(a), np.concatenate(b)
    pa = np.array([np.mean(a == g) for g in GRID])
    pb = np.array([np.mean(b == g) for g in GRID])
    np.testing.assert_allclose(pa, pb, atol=0.003)


def test_a_users_csv_is_read(tmp_path):
    path = tmp_path / "ratings.csv"
    rows = [f"{10 + u},{100 + i},{GRID[(u + i) % 10]},0" for u in range(20) for i in range(6)]
    path.write_text("userId,movieId,rating,timestamp\n" + "\n".join(rows) + "\n")
    z = load_ratings_csv(path)
    assert z.shape == (120, 3) and z[:, 0].max() == 19 and z[:, 1].max() == 5


BAD_FILES = {
    "unknown column": ("userId,movieId,rating,genre\n", ["unknown column 'genre'"]),
    "missing column": ("userId,movieId,timestamp\n", ["no column 'rating'"]),
    "rating off the grid": ("userId,movieId,rating\n1,1,3.7\n", ["rating", "'3.7'"]),
    "bad id": ("userId,movieId,rating\nx,1,3\n", ["userId", "'x'"]),
    "too few ratings": ("userId,movieId,rating\n1,1,3\n", ["1 ratings", "at least 100"]),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_user_file_is_one_line_and_writes_nothing(case, tmp_path):
    text, words = BAD_FILES[case]
    path = tmp_path / "ratings.csv"
    path.write_text(text if text.count("\n") > 1 else text + "1,1,3\n")
    with pytest.raises(ConfigError):
        load_ratings_csv(path)
    assert_bad_run_input(tmp_path / "out", ["study=bi_shen_r3", "profile=ci",
                                            "study.grid.data=[csv]", f"study.data_csv={path}"],
                         ["study.data_csv", *words])


BAD = {
    "unknown data source": (["study.grid.data=[netflix]"], ["study.grid.data", "'netflix'"]),
    "test share of 1": (["study.test_share=1.0"], ["study.test_share"]),
    "hold-out share of 0": (["study.dip_holdouts=[0.0]"], ["study.dip_holdouts"]),
    "reference part not a hold-out": (["study.roster.DIP_15.public_part=holdout_50"],
                                      ["study.roster.DIP_15.public_part", "'holdout_50'"]),
    "zero MF dimension": (["study.mf.dim=0"], ["study.mf.dim"]),
    "negative learning rate": (["study.mf.lr=-0.1"], ["study.mf.lr"]),
    "one CV fold": (["+study.mf.cv={folds: 1, l2: [0.1]}"], ["study.mf.cv.folds"]),
    "CV of an unknown setting": (["+study.mf.cv={folds: 3, epochs: [5]}"], ["study.mf.cv"]),
    "CV penalty of 0": (["+study.mf.cv={folds: 3, l2: [0.0]}"], ["study.mf.cv.l2"]),
    "EXM reading unknown": (["study.roster.EXM.epsilon_is=per_record"],
                            ["study.roster.EXM.epsilon_is", "per_draw"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_is_one_line_and_writes_nothing(case, tmp_path):
    overrides, words = BAD[case]
    assert_bad_run_input(tmp_path / "out", ["study=bi_shen_r3", "profile=ci", *overrides],
                         words)
