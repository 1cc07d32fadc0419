"""Bi & Shen S1 (discrete means) and S2 (KS distortion), known F, at profile=ci: the claims
give the verdicts of profile=paper, and S2's ranges match the ranges the paper quotes."""

import numpy as np
import pytest
from study_helpers import assert_verdicts

from experiments.bi_shen.exm import SweptEXM
from experiments.bi_shen.known_f.claims import S1_CLAIMS, S2_CLAIMS
from experiments.bi_shen.known_f.tables import s1_grid, s2_quoted
from harness import config
from harness.engine.study import load_study
from harness.errors import ConfigError

#: Claims whose statistic sits within 2 MCSE of its threshold at the ci count (200 replicates):
#: S1 dip-flat-eps (DIP(ε=1)/DIP(ε=4) − 1 = +0.03 ± 0.04 against ±0.10) and
#: dip-below-literal-lrm (LRM_unit/DIP ≈ 1 at Geometric and Poisson, UNDECIDED at paper too);
#: S2 competitors-tradeoff (OPM's KS moves by 0.5–1 % between ε = 1 and 4).
S1_MAY_BE_UNDECIDED = ("dip-flat-eps", "dip-below-literal-lrm")
S2_MAY_BE_UNDECIDED = ("competitors-tradeoff",)


@pytest.fixture(scope="module")
def s1(ci_sweep_of):
    return ci_sweep_of("bi_shen_s1")


@pytest.fixture(scope="module")
def s2(ci_sweep_of):
    return ci_sweep_of("bi_shen_s2")


def test_s1_claims_at_ci_match_paper_profile(s1):
    assert_verdicts(S1_CLAIMS, s1[2], "bi_shen_s1", S1_MAY_BE_UNDECIDED, paper="bi_shen")


def test_s2_claims_at_ci_match_paper_profile(s2):
    assert_verdicts(S2_CLAIMS, s2[2], "bi_shen_s2", S2_MAY_BE_UNDECIDED, paper="bi_shen")


def test_s2_ranges_match_the_quoted_ranges(s2):
    q = s2_quoted(s2[2]).set_index("method")
    print(q.round(2).to_string())
    assert 22 < q.loc["DIP", "ours_min"] and q.loc["DIP", "ours_max"] < 32
    assert q.loc["LRM", "ours_min"] == pytest.approx(129.55, rel=0.1)
    assert q.loc["LRM", "ours_max"] == pytest.approx(439.61, rel=0.1)
    assert q.loc["OPM", "ours_min"] == pytest.approx(507.38, rel=0.03)
    assert q.loc["OPM", "ours_max"] == pytest.approx(510.14, rel=0.03)


def test_s1_grid_has_every_cell(s1):
    g = s1_grid(s1[2])
    assert len(g) == 4 * 4 * 7  # 4 distributions, 4 ε, NP + 6 methods
    assert g["ours"].notna().all()
    exm = g[g["method"] == "EXM"]  # the swept ε is each draw's: the release spends n·ε
    assert (exm["realised_epsilon"] == 1000 * exm["epsilon"]).all()
    other = g[g["method"].isin(["DIP", "LRM", "OPM"])]
    assert (other["realised_epsilon"] == other["epsilon"]).all()


def test_exm_reads_the_swept_epsilon_per_draw_and_proportion_is_count_at_total_epsilon():
    """EXM (spec §2) at the paper's calibration spends n·ε; its proportion score gives exactly
    the draws of the count score with each draw at ε/n, i.e. EXM at a total ε."""
    study = load_study(config.load(["study=bi_shen_s1", "profile=ci"])["study"])
    scenario = {"n": 1000, "dist": "poisson"}
    data = study.generate(scenario, np.random.default_rng(1), 2)
    exm = study.method("EXM", scenario).release(data, 2.0, np.random.default_rng(2))
    assert exm.epsilon == 2000.0 and exm.ledger.total_epsilon() == pytest.approx(2000.0)
    assert "not covered" in exm.ledger.entries[0].note
    prop = study.method("EXM_prop", scenario).release(data, 2.0, np.random.default_rng(3))
    total = SweptEXM(quality="count", epsilon_is="total").release(data, 2.0,
                                                                   np.random.default_rng(3))
    assert total.epsilon == 2.0 and total.ledger.total_epsilon() == pytest.approx(2.0)
    np.testing.assert_array_equal(prop.sets.values, total.sets.values)
    with pytest.raises(ConfigError, match=r"study\.roster\.EXM\.epsilon_is"):
        cfg = config.load(["study=bi_shen_s1", "profile=ci",
                           "study.roster.EXM.epsilon_is=per_record"])
        load_study(cfg["study"]).method("EXM", scenario)
