"""Bi & Shen S3 (the low-dimensional Gaussian graphical model, appendix) at profile=ci, on one
shared sweep: the claims give the verdicts of profile=paper, the tables hold every cell, every
private release spends exactly its claimed ε, the vectorised data-generating process and
evaluation match record-level loops, and bad configuration values give one clear line."""

import numpy as np
import pytest
from study_helpers import assert_bad_run_input, assert_verdicts

from experiments.bi_shen.s3.claims import CLAIMS
from experiments.bi_shen.s3.tables import grid, quoted_ranges
from harness import config
from harness import rng as rng_mod
from harness.data import Original
from harness.engine.aggregate import read_replicate_metrics
from harness.engine.study import load_study
from harness.inference.glasso import covariance, entropy_loss, glasso_cv

#: dip-smaller-sd: the smallest competitor/DIP ratio of SDs across replicates sits near 2 MCSE
#: above its threshold 5 at the ci count (8.6 ± 1.5 at 40 replicates; UNDECIDED at 15–30).
MAY_BE_UNDECIDED_AT_CI = ("dip-smaller-sd",)


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of("bi_shen_s3")


@pytest.fixture(scope="module")
def study():
    return load_study(config.load(["study=bi_shen_s3", "profile=ci"])["study"])


def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], "bi_shen_s3", MAY_BE_UNDECIDED_AT_CI, paper="bi_shen")


def test_tables_hold_every_cell(ci_run):
    g = grid(ci_run[2])
    print(g.to_string(index=False))
    # 2 p × 2 networks × (NP, DIP 15/25/35 %, NLRM, NOPM) × 4 ε
    assert len(g) == 2 * 2 * 6 * 4
    assert g["ours"].notna().all() and g["ours_sd"].notna().all()
    assert np.isfinite(g["ours"]).all()  # no "infinite" loss in low dimensions
    q = quoted_ranges(ci_run[2])
    assert list(q["competitor"]) == ["NLRM", "NOPM", "both"]
    assert (q["paper_improvement_min_pct"] == 18437.0).all()


def test_rows_carry_the_swept_epsilon_and_dip_releases_the_privatized_part(ci_run):
    cfg = ci_run[0]
    rm = read_replicate_metrics(cfg)
    private = rm[rm["method"] != "NP"]
    assert (private["epsilon"] == private["privacy"]).all()
    assert rm.loc[rm["method"] == "NP", "epsilon"].isna().all()
    assert len(rm[rm["metric"] == "entropy_loss"]) == 4 * cfg["n_replicates"] * (1 + 5 * 4)


@pytest.mark.parametrize("label", ["DIP_15", "DIP_25", "DIP_35", "NLRM", "NOPM"])
@pytest.mark.parametrize("network", ["chain", "exp_decay"])
def test_each_release_spends_exactly_its_claimed_epsilon(study, label, network):
    p = 5
    scenario = {"N": 2000, "p": p, "network": network}
    data = Original.of(study.generate(scenario, np.random.default_rng(3), 2)).train
    synth = study.method(label, scenario)
    for eps in study.epsilons():
        release = synth.release(data, eps, np.random.default_rng(4))
        entries = release.ledger.entries
        assert release.ledger.total_epsilon() == pytest.approx(eps, rel=1e-12)
        assert release.epsilon == eps
        # sequential composition over the p privatized columns, ε/p each (spec §1.6, §2)
        assert len(entries) == p
        assert all(e.epsilon == pytest.approx(eps / p, rel=1e-12) for e in entries)
        assert {e.relation for e in entries} == {"substitution"}


@pytest.mark.parametrize("network", ["chain", "exp_decay"])
def test_vectorised_generate_matches_a_record_level_loop(study, network):
    """The batched Σ, Cholesky factor and records against loops over replicates, entries and
    records, fed the same draws in the same order."""
    n, p, R = 200, 5, 3
    scenario = {"N": n, "p": p, "network": network}
    orig = Original.of(study.generate(scenario, np.random.default_rng(11), R))
    rng = np.random.default_rng(11)
    if network == "chain":
        gaps = rng.uniform(0.5, 1.0, (R, p - 1))
    z = rng.standard_normal((R, n, p))
    seeds = rng.integers(0, 2**63, size=R)
    for r in range(R):
        if network == "chain":
            tau = [0.0]
            for g in gaps[r]:
                tau.append(tau[-1] + g)
            sigma = np.array([[np.exp(-0.5 * abs(tau[k] - tau[l])) for l in range(p)]
                              for k in range(p)])
            omega = np.linalg.inv(sigma)
            assert np.allclose(np.triu(omega, 2), 0, atol=1e-10)  # tridiagonal
        else:
            omega = np.array([[np.exp(-2.0 * abs(k - l)) for l in range(p)] for k in range(p)])
            sigma = np.linalg.inv(omega)
        chol = np.linalg.cholesky(sigma)
        x = np.array([chol @ z[r, i] for i in range(n)])
        np.testing.assert_allclose(orig.train.values[r], x, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(orig.part("precision")[r], omega, rtol=1e-10, atol=1e-12)
        assert orig.part("cv_seed")[r] == seeds[r]


def test_evaluation_matches_a_plain_loop_and_is_right_at_nopm_scale(study):
    """The study's entropy losses against one glasso_cv per data set and EL = tr(ΣΩ̂) −
    log det(ΣΩ̂) − p with a plain determinant; and at an SD of 10⁴ (NOPM's scale) the estimate is
    S⁻¹ (every penalty ρ <= 1 is negligible beside S ≈ 10⁸), positive definite, not the zero
    matrix the solver's former absolute tolerance gave (the study fits releases as they are)."""
    scenario = {"N": 2000, "p": 5, "network": "chain"}
    orig = Original.of(study.generate(scenario, np.random.default_rng(5), 3))
    release = study.method("NP", scenario).release(orig.train, None, np.random.default_rng(6))
    got = study.glasso_entropy_loss(orig, release, scenario)["entropy_loss"]
    for r in range(3):
        fit = glasso_cv(orig.train.values[r], rng_mod.generator(int(orig.part("cv_seed")[r]),
                                                                "glasso_cv"),
                        grid=study.penalties(), folds=5)
        m = np.linalg.inv(orig.part("precision")[r]) @ fit.precision
        el = np.trace(m) - np.log(np.linalg.det(m)) - 5
        assert got[r, 0] == pytest.approx(el, rel=1e-4)
    x = orig.train.values[0]
    seed = int(orig.part("cv_seed")[0])
    big = study.estimate_precision(1e4 * x[None], seed)[0]
    np.testing.assert_allclose(big, np.linalg.inv(covariance(1e4 * x)), rtol=1e-3, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(big) > 0)


BAD = {
    "unknown network": (["study.grid.network=[star]"], ["study.grid.network", "'star'",
                                                         "chain", "exp_decay"]),
    "p of 1": (["study.grid.p=[1]"], ["study.grid.p"]),
    "chain gap reversed": (["study.chain.gap=[1.0,0.5]"], ["study.chain.gap", "0 < low < high"]),
    "negative decay rate": (["study.exp_decay.rate=-2"], ["study.exp_decay.rate", "> 0"]),
    "one fold": (["study.glasso.folds=1"], ["study.glasso.folds", ">= 2"]),
    "polish tolerance of 0": (["study.glasso.polish_tol=0"], ["study.glasso.polish_tol", "> 0"]),
    "penalty grid from 0": (["study.glasso.penalties.low=0"], ["study.glasso.penalties"]),
    "hold-out share of 1.5": (["study.roster.DIP_15.holdout_share=1.5"],
                              ["holdout_share", "1.5"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_is_one_line_and_writes_nothing(case, tmp_path):
    overrides, words = BAD[case]
    assert_bad_run_input(tmp_path / "out", ["study=bi_shen_s3", "profile=ci", *overrides],
                         words)


@pytest.mark.parametrize("network", ["chain", "exp_decay"])
def test_newton_polished_fits_are_the_exact_minimisers_of_the_admm_path(study, network):
    """S3's solver setting (glasso.polish_tol: ADMM to 1e-3, then Newton on the support)
    against the plain ADMM path at tol 1e-7 and a reference solved to tol 1e-11, on S3's own
    releases (NP, DIP_25, NLRM at ε = 1, whose noise puts S at a scale of ~10⁵): the same
    chosen penalties, entropy losses within 1e-7 of the reference's, and within the plain
    path's own distance from it (up to ~3e-5 relative on NP)."""
    assert study.config["glasso"].get("polish_tol") is not None  # the study's setting
    for p in (5, 15):
        scenario = {"N": 2000, "p": p, "network": network}
        orig = Original.of(study.generate(scenario, np.random.default_rng(70 + p), 1))
        sets = [study.method(label, scenario).release(orig.train, eps, np.random.default_rng(7))
                .sets.values[0, 0] for label, eps in (("NP", None), ("DIP_25", 1.0),
                                                       ("NLRM", 1.0))]
        seed = int(orig.part("cv_seed")[0])
        omega = orig.part("precision")[0]
        losses = {}
        for name, options in (("polished", {"polish_tol": 1e-3}), ("admm", {}),
                              ("reference", {"tol": 1e-11, "max_iter": 100000})):
            fits = [glasso_cv(x, grid=study.penalties(), folds=5, warm_start=True,
                              fold=study.cv_fold_labels(x[None], seed)[0], **options)
                    for x in sets]
            assert all(f.converged for f in fits)
            losses[name] = np.array([entropy_loss(omega, f.precision)[0] for f in fits])
            losses[name, "penalty"] = [float(f.penalty) for f in fits]
        ref = losses["reference"]
        gap_polished = np.abs(losses["polished"] - ref) / ref
        gap_admm = np.abs(losses["admm"] - ref) / ref
        print(f"p={p} {network}: relative EL gap to the reference, polished {gap_polished}, "
              f"ADMM 1e-7 {gap_admm}")
        assert losses["polished", "penalty"] == losses["reference", "penalty"]
        assert losses["admm", "penalty"] == losses["reference", "penalty"]
        assert np.all(gap_polished <= 1e-7)
        assert np.all(gap_polished <= np.maximum(gap_admm, 1e-9))
        np.testing.assert_allclose(losses["polished"], losses["admm"], rtol=5e-5)
