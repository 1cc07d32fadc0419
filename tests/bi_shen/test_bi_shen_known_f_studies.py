"""Bi & Shen S1 (discrete means) and S2 (KS distortion), known F, at profile=ci: the claims
give the verdicts of profile=paper, and S2's ranges match the ranges the paper quotes."""

import pytest
from study_helpers import assert_verdicts

from experiments.bi_shen.known_f.claims import S1_CLAIMS, S2_CLAIMS
from experiments.bi_shen.known_f.tables import s1_grid, s2_quoted

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
    assert len(g) == 4 * 4 * 5  # 4 distributions, 4 ε, NP + 4 methods
    assert g["ours"].notna().all()
