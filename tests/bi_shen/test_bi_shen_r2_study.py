"""Bi & Shen R2 (bank marketing, logistic regression; Table 3) at profile=ci, on one shared
sweep: the claims give the verdicts of profile=paper, the tables hold every cell, every release
spends exactly its claimed ε (ε/11 per column), the stand-in has the paper's shape, the glm-style
fit is R's glm, separation included, and a bad configuration or a bad user file is one
clear line with nothing written."""

import numpy as np
import pytest
from study_helpers import assert_bad_run_input, assert_verdicts

from experiments.bi_shen.r2.claims import CLAIMS
from experiments.bi_shen.r2.data import COLUMNS, N_RECORDS, UCI_COLUMNS, load_bank_csv
from experiments.bi_shen.r2.tables import anchors, grid, table_3
from harness import config
from harness.data import Original
from harness.engine.study import load_study
from harness.errors import ConfigError
from harness.inference.glm_logit import glm_logit
from harness.inference.regression import (
    glm_logistic,
    logistic_mle,
    logistic_probabilities,
    with_intercept,
)
from harness.metrics.accuracy import mean_bernoulli_kl

#: dip-flat-eps and dip-holdout compare DIP cells a few per cent apart: UNDECIDED at 10 and 20
#: replicates (see conf/study/bi_shen_r2.yaml).
MAY_BE_UNDECIDED_AT_CI = ("dip-flat-eps", "dip-holdout")  # UNDECIDED at paper (60) too


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of("bi_shen_r2")


@pytest.fixture(scope="module")
def study():
    return load_study(config.load(["study=bi_shen_r2", "profile=ci"])["study"])


def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], "bi_shen_r2", MAY_BE_UNDECIDED_AT_CI, paper="bi_shen")


def test_tables_hold_every_cell(ci_run):
    mx = ci_run[2]
    g = grid(mx)
    print(g.to_string(index=False))
    assert len(g) == 6 * 4  # DIP 15/25/35 %, NLRM, OPM, NOPM × 4 ε
    assert g["ours"].notna().all()
    t = table_3(mx)
    assert list(t["paper"])[:2] == [0.047, 0.311] and np.isinf(t["paper"].iloc[2:]).all()
    # the private GLM's noisy score sum has no solution: KL infinite, as in the paper
    assert list(t["method"])[2] == "OPM" and np.isinf(t["ours"].iloc[2])
    a = anchors(mx)
    print(a.to_string(index=False))
    # NLRM reproduces the paper; DIP's 0.047 is the known non-reproduction (spec A32)
    assert a["check"].iloc[0] != "FAIL" and a["check"].iloc[1] == "FAIL"


@pytest.mark.parametrize("label", ["DIP_15", "DIP_25", "DIP_35", "NLRM", "NOPM"])
def test_each_release_spends_exactly_its_claimed_epsilon(study, label):
    scenario = {"data": "standin"}
    data = Original.of(study.generate(scenario, np.random.default_rng(3), 2)).train
    synth = study.method(label, scenario)
    for eps in study.epsilons():
        release = synth.release(data, eps, np.random.default_rng(4))
        entries = release.ledger.entries
        assert release.ledger.total_epsilon() == pytest.approx(eps, rel=1e-12)
        assert release.epsilon == eps
        # sequential composition over the 11 privatized columns, ε/11 each (spec A6)
        assert len(entries) == 11
        assert all(e.epsilon == pytest.approx(eps / 11, rel=1e-12) for e in entries)
        assert set(np.unique(release.sets.values[..., 10])) <= {0.0, 1.0}


def test_opm_is_the_private_glm_spending_epsilon_once_per_record(study):
    """OPM releases a model: one ledger entry at ε (each record's y_i·(1, x_i) in the ℓ2 ball,
    parallel over records); the covariates are public (fixed design), which the note says."""
    scenario = {"data": "standin"}
    data = Original.of(study.generate(scenario, np.random.default_rng(3), 2)).train
    release = study.method("OPM", scenario).release(data, 1.0, np.random.default_rng(4))
    assert release.kind == "model" and release.sets.coefficients.shape == (2, 1, 11)
    (entry,) = release.ledger.entries
    assert entry.epsilon == 1.0 and release.epsilon == 1.0
    assert "fixed design" in entry.note and "not covered" in entry.note


def test_standin_has_the_papers_shape(study):
    z = study.records("standin")
    assert z.shape == (N_RECORDS, 11)
    assert z[:, 10].mean() == pytest.approx(0.1266, abs=0.01)
    assert z[:, COLUMNS.index("default")].sum() == 3
    assert set(np.unique(z[:, COLUMNS.index("education")])) <= set(range(7))


def _r_glm(x, y):
    """R's glm on one data set of records, one by one (the R mimic, no shortcuts)."""
    fit = glm_logit(with_intercept(x), y)
    return np.nan_to_num(fit.coef), fit.converged


def test_glm_fit_is_r_glm_with_and_without_separation():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 2))
    y = (rng.random(400) < 0.3).astype(float)
    beta, ok, separated = glm_logistic(x, y)
    ref, ref_ok = _r_glm(x, y)
    assert ok and ref_ok and not separated
    np.testing.assert_allclose(beta, ref, rtol=1e-6, atol=1e-8)
    x_sep = np.c_[x, np.zeros(400)]
    x_sep[0, 2] = 1.0  # one record with a binary covariate of 1, and y = 0 there
    y_sep = y.copy()
    y_sep[0] = 0
    beta, ok, separated = glm_logistic(x_sep, y_sep)
    assert separated  # no MLE: the answer is where R's iterations stop
    ref, ref_ok = _r_glm(x_sep, y_sep)
    print("separated: ours", beta, ok, "R", ref, ref_ok)
    # exact on any CPU: no record repeats, so glm_logistic refits the separated data set with
    # glm_logit on the records themselves, the reference's own call (the same path)
    np.testing.assert_array_equal(beta, ref)
    assert ok == ref_ok
    assert np.all(np.isfinite(beta)) and beta[3] < -5


def test_glm_fit_of_dip_releases_is_r_glm_on_the_records(study):
    """glm_logistic on DIP releases (a few thousand distinct records of ~23,000, some
    separated) gives R's glm fit of the records one by one: the same coefficients up to the
    deviance rule, flags and KL."""
    scenario = {"data": "standin"}
    data = Original.of(study.generate(scenario, np.random.default_rng(3), 3)).train
    v = study.method("DIP_25", scenario).release(data, 1.0, np.random.default_rng(5)).sets.values
    beta, ok, separated = glm_logistic(v[..., :10], v[..., 10])
    _, newton_ok = logistic_mle(v[..., :10], v[..., 10], maxit=25, tol=1e-8, max_abs=np.inf)
    np.testing.assert_array_equal(separated, ~newton_ok)
    assert separated.any() and not separated.all()  # both paths are exercised
    flat = v.reshape(-1, *v.shape[-2:])
    refs = [_r_glm(r[:, :10], r[:, 10]) for r in flat]
    ref = np.stack([r[0] for r in refs]).reshape(beta.shape)
    print("R converged", [r[1] for r in refs], "separated", separated.ravel())
    np.testing.assert_array_equal(ok.ravel(), [r[1] for r in refs])
    np.testing.assert_allclose(beta, ref, rtol=1e-5, atol=1e-6)
    x, p = study.records("standin")[:, :10], study.original_probabilities("standin")
    kl, kl_ref = (mean_bernoulli_kl(p, logistic_probabilities(x, b)) for b in (beta, ref))
    print("KL", kl.ravel(), kl_ref.ravel())
    np.testing.assert_allclose(kl, kl_ref, rtol=1e-6)


def _bank_csv(path, rows, header=("age", "job", "marital", "education", "default", "housing",
                                  "loan", "contact", "campaign", "y")):
    path.write_text(";".join(header) + "\n" + "".join(";".join(r) + "\n" for r in rows))
    return path


GOOD_ROW = ("41", "technician", "single", "university.degree", "no", "yes", "no", "telephone",
            "2", "yes")


def test_a_users_csv_is_read_and_mapped(tmp_path):
    rows = [GOOD_ROW] * 25 + [("30", "retired", "divorced", "basic.4y", "no", "no", "yes",
                               "cellular", "1", "no")] * 5
    rows.append(("50", "unknown", "married", "high.school", "no", "no", "no", "cellular", "1",
                 "no"))  # dropped: "unknown"
    z = load_bank_csv(_bank_csv(tmp_path / "bank.csv", rows))
    assert z.shape == (30, 11)
    np.testing.assert_array_equal(z[0], [41, 1, 1, 0, 6, 0, 1, 0, 1, 2, 1])
    np.testing.assert_array_equal(z[-1], [30, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0])
    assert "duration" in UCI_COLUMNS


BAD_FILES = {
    "missing column": (dict(header=("age", "job")), ["no column 'marital'"]),
    "unknown column": (dict(header=("age", "salary")), ["unknown column 'salary'"]),
    "unknown job": (dict(row=("41", "astronaut", *GOOD_ROW[2:])), ["job", "'astronaut'"]),
    "age not a count": (dict(row=("4x", *GOOD_ROW[1:])), ["age", "'4x'", "integer"]),
    "campaign of 0": (dict(row=(*GOOD_ROW[:8], "0", "yes")), ["campaign", "'0'", ">= 1"]),
    "too few rows": (dict(n=5), ["5 complete rows", "at least 20"]),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_user_file_is_one_line_and_writes_nothing(case, tmp_path):
    spec, words = BAD_FILES[case]
    rows = [GOOD_ROW] * spec.get("n", 25) + ([spec["row"]] if "row" in spec else [])
    kwargs = {"header": spec["header"]} if "header" in spec else {}
    if "header" in spec:
        rows = [GOOD_ROW[:len(spec["header"])]] * 25
    path = _bank_csv(tmp_path / "bank.csv", rows, **kwargs)
    with pytest.raises(ConfigError):
        load_bank_csv(path)
    assert_bad_run_input(tmp_path / "out", ["study=bi_shen_r2", "profile=ci",
                                            "study.grid.data=[csv]", f"study.data_csv={path}"],
                         ["study.data_csv", *words])


BAD = {
    "unknown data source": (["study.grid.data=[census]"],
                            ["study.grid.data", "'census'", "standin", "csv"]),
    "csv without a file": (["study.grid.data=[csv]"], ["study.data_csv", "needs the path"]),
    "negative stand-in seed": (["study.standin.seed=-1"], ["study.standin.seed", ">= 0"]),
    "unknown column kind": (["study.dip_columns.age.kind=ordinal"],
                            ["kind", "'ordinal'"]),
    "hold-out share of 1.5": (["study.roster.DIP_25.holdout_share=1.5"],
                              ["holdout_share", "1.5"]),
    "unknown LRM rule": (["study.roster.NLRM.sensitivity=huge"], ["sensitivity", "'huge'"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_is_one_line_and_writes_nothing(case, tmp_path):
    overrides, words = BAD[case]
    assert_bad_run_input(tmp_path / "out", ["study=bi_shen_r2", "profile=ci", *overrides],
                         words)
