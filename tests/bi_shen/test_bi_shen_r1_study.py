"""Bi & Shen R1 (UC salary, private mean; Table 3) at profile=ci, on one shared sweep: the claims
give the verdicts of profile=paper, the tables hold every cell, every release spends exactly its
claimed ε, the stand-in matches the paper's moments, and a bad configuration or a bad user file
is one clear line with nothing written."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from study_helpers import assert_bad_run_input, assert_verdicts

from experiments.bi_shen.r1.claims import CLAIMS
from experiments.bi_shen.r1.data import (
    N_RECORDS,
    PAPER_MEAN,
    PAPER_Q90,
    PAPER_SD,
    load_salary_csv,
)
from experiments.bi_shen.r1.tables import anchors, eps_increase, grid, quoted_range, table_3
from harness import config
from harness.data import Original
from harness.engine.study import load_study
from harness.errors import ConfigError

#: dip-moderate-eps: UNDECIDED at profile=paper too (DIP_15's rise, 41 ± 6 %, sits within 2 MCSE
#: of 50 %); at the ci count (25) the rises have MCSEs of 30–47 percentage points.
MAY_BE_UNDECIDED_AT_CI = ("dip-moderate-eps",)


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of("bi_shen_r1")


@pytest.fixture(scope="module")
def study():
    return load_study(config.load(["study=bi_shen_r1", "profile=ci"])["study"])


def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], "bi_shen_r1", MAY_BE_UNDECIDED_AT_CI, paper="bi_shen")


def test_tables_hold_every_cell(ci_run):
    mx = ci_run[2]
    g = grid(mx)
    print(g.to_string(index=False))
    assert len(g) == 6 * 4  # DIP 15/25/35 %, LRM, OPM, OPM_T400k × 4 ε
    assert g["ours"].notna().all() and g["ours_sd"].notna().all()
    t = table_3(mx)
    assert list(t["paper"]) == [0.40, 13.08, 4.69, 4.69]
    assert len(eps_increase(mx)) == 6
    assert list(quoted_range(mx)["paper_improvement_min_pct"]) == [405.0, 405.0]
    a = anchors(mx)
    print(a.to_string(index=False))
    assert len(a) == 3 and (a["check"] != "FAIL").all()


@pytest.mark.parametrize("label", ["DIP_15", "DIP_25", "DIP_35", "LRM", "OPM", "OPM_T400k"])
def test_each_release_spends_exactly_its_claimed_epsilon(study, label):
    scenario = {"data": "standin"}
    data = Original.of(study.generate(scenario, np.random.default_rng(3), 2)).train
    synth = study.method(label, scenario)
    for eps in study.epsilons():
        release = synth.release(data, eps, np.random.default_rng(4))
        entries = release.ledger.entries
        assert release.ledger.total_epsilon() == pytest.approx(eps, rel=1e-12)
        assert release.epsilon == eps
        assert len(entries) == 1 and entries[0].epsilon == pytest.approx(eps, rel=1e-12)
        n_kept = N_RECORDS - round(int(label[4:]) / 100 * N_RECORDS) if label[:4] == "DIP_" \
            else N_RECORDS
        assert release.sets.values.shape == (2, 1, n_kept, 1)


def test_standin_matches_the_papers_moments(study):
    s = study.config["standin"]
    pop = stats.burr12(s["c"], s["d"], scale=s["scale"])
    assert pop.mean() == pytest.approx(PAPER_MEAN, rel=1e-5)
    assert pop.std() == pytest.approx(PAPER_SD, rel=1e-5)
    assert pop.ppf(0.9) == pytest.approx(PAPER_Q90, rel=1e-5)
    z = study.salaries("standin")
    assert z.size == N_RECORDS and z.max() == 2_300_000 and (z > 0).all()
    assert z.mean() == pytest.approx(PAPER_MEAN, rel=0.01)
    assert np.quantile(z, 0.9) == pytest.approx(PAPER_Q90, rel=0.01)
    # the same data set in every replicate; the mean the metric reads is the full data's
    orig = Original.of(study.generate({"data": "standin"}, np.random.default_rng(0), 3))
    assert np.array_equal(orig.train.values[2, :, 0], z)
    assert np.allclose(orig.part("full_mean"), z.mean())


def _write(path, text):
    path.write_text(text)
    return path


def test_a_users_csv_is_read_and_used(tmp_path):
    path = _write(tmp_path / "uc.csv", "salary\n" + "\n".join(str(1000 * (i + 1))
                                                            for i in range(40)) + "\n")
    np.testing.assert_array_equal(load_salary_csv(path), 1000.0 * np.arange(1, 41))
    cfg = config.load(["study=bi_shen_r1", "profile=ci", "study.grid.data=[csv]",
                       f"study.data_csv={path}"])
    st = load_study(cfg["study"])
    orig = Original.of(st.generate({"data": "csv"}, np.random.default_rng(0), 2))
    assert orig.train.values.shape == (2, 40, 1)
    assert np.allclose(orig.part("full_mean"), 20500.0)


BAD_FILES = {
    "missing column": ("pay\n1\n2\n", ["unknown column 'pay'", "allowed: salary"]),
    "unknown column": ("salary,name\n1,a\n2,b\n", ["unknown column 'name'"]),
    "negative salary": ("salary\n" + "10\n" * 20 + "-5\n", ["row 21", "'-5'", ">= 0"]),
    "text salary": ("salary\n" + "10\n" * 20 + "abc\n", ["row 21", "'abc'"]),
    "empty cell": ("salary\n" + "10\n" * 20 + "\n20\n", ["row 21", "''"]),
    "too few rows": ("salary\n1\n2\n", ["2 salaries", "at least 10"]),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_user_file_is_one_line_and_writes_nothing(case, tmp_path):
    text, words = BAD_FILES[case]
    path = _write(tmp_path / "uc.csv", text)
    with pytest.raises(ConfigError):
        load_salary_csv(path)
    assert_bad_run_input(tmp_path / "out", ["study=bi_shen_r1", "profile=ci",
                                            "study.grid.data=[csv]", f"study.data_csv={path}"],
                         ["study.data_csv", *words])


BAD = {
    "unknown data source": (["study.grid.data=[census]"],
                            ["study.grid.data", "'census'", "standin", "csv"]),
    "csv without a file": (["study.grid.data=[csv]"], ["study.data_csv", "needs the path"]),
    "file that does not exist": (["study.grid.data=[csv]", "study.data_csv=/nonexistent.csv"],
                                 ["study.data_csv", "cannot read"]),
    "negative Burr shape": (["study.standin.c=-1"], ["study.standin.c", "> 0"]),
    "fractional stand-in size": (["study.standin.n=10.5"], ["study.standin.n", "integer"]),
    "hold-out share of 1.5": (["study.roster.DIP_25.holdout_share=1.5"],
                              ["holdout_share", "1.5"]),
    "unknown OPM bound": (["study.roster.OPM.bound=huge"], ["bound", "'huge'"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_is_one_line_and_writes_nothing(case, tmp_path):
    overrides, words = BAD[case]
    assert_bad_run_input(tmp_path / "out", ["study=bi_shen_r1", "profile=ci", *overrides],
                         words)


def test_rows_carry_the_swept_epsilon(ci_run):
    from harness.engine.aggregate import read_replicate_metrics

    cfg = ci_run[0]
    rm = read_replicate_metrics(cfg)
    assert (rm["epsilon"] == rm["privacy"]).all()
    assert len(rm[rm["metric"] == "rel_mean_diff_pct"]) == 6 * 4 * cfg["n_replicates"]
    assert isinstance(rm, pd.DataFrame)
