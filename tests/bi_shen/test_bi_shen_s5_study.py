"""Bi & Shen S5 (Table 2, linear regression) end to end at profile=ci: the claims give the
verdicts of profile=paper, Table 2 holds every printed cell beside ours, and no §7.1 anchor
lies outside its tolerance band by more than Monte Carlo error."""

import pytest
from study_helpers import assert_verdicts

from experiments.bi_shen.paper_numbers import TABLE_2
from experiments.bi_shen.s5.claims import CLAIMS
from experiments.bi_shen.s5.tables import anchors, table_2

#: competitors-fail: the smallest LRM/DIP ratio (N = 200, p = 30, DIP 15 %, ε = 4; the paper's
#: 6.6) sits within 2 MCSE of the threshold 5 at the ci count (6.1 ± 0.6 at 40 replicates).
MAY_BE_UNDECIDED_AT_CI = ("competitors-fail",)


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of("bi_shen_s5")


def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], "bi_shen_s5", MAY_BE_UNDECIDED_AT_CI, paper="bi_shen")


def test_table_2_prints_every_cell_beside_ours(ci_run):
    t = table_2(ci_run[2])
    print(t.round(3).to_string(index=False))
    assert len(t) == 4 * len(TABLE_2)
    assert t["ours"].notna().all() and t["ours_sd"].notna().all()


def test_no_anchor_outside_its_band(ci_run):
    a = anchors(ci_run[2])
    print(a.to_string(index=False))
    assert len(a) == 32
    assert (a["check"] != "FAIL").all(), a[a["check"] == "FAIL"]


def test_dip_releases_the_privatized_part_only(ci_run):
    # DIP releases n = N − round(h·N) records; the hold-out is never released
    _, _, metrics = ci_run
    dip = metrics[(metrics["method"] == "DIP") & (metrics["metric"] == "l2_error")]
    assert set(dip["holdout"]) == {0.15, 0.25, 0.35}
