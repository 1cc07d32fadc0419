"""Bowen & Liu Simulation 1 end to end at profile=ci: the claims give the same verdicts as at
profile=paper, and Supplementary Table 1 agrees with the paper within Monte Carlo error."""

import numpy as np
import pytest
from study_helpers import assert_verdicts

from experiments.bowen_liu.sim1.claims import CLAIMS
from experiments.bowen_liu.sim1.tables import supp_table_1


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of("bowen_liu_sim1")


#: Claims whose statistic sits within 2 MCSE of its threshold at the ci count (1000 repeats), so
#: they are UNDECIDED there: 1a (median |MD/BB-MR RMSE ratio - 1| 0.247 ± 0.019 vs 0.25), 5 (the
#: CP deficit of LAP at π = 0.25 vs 0.5 differs by less than its MCSE) and 7a (smallest CP
#: outside small n, ε 0.910 ± 0.009 vs 0.90).
MAY_BE_UNDECIDED_AT_CI = ("1a", "5", "7a")


def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], "bowen_liu_sim1", MAY_BE_UNDECIDED_AT_CI)


def test_supp_table_1_within_monte_carlo_error(ci_run):
    _, _, metrics = ci_run
    t = supp_table_1(metrics)
    print(t.to_string(index=False))
    assert len(t) == 27
    assert (t["z"].abs() < 4).all()
    # the paper's smallest proportions are reproduced to within 0.015 even at 1000 repeats
    assert (t["ours"] - t["paper"]).abs().max() < 0.02


def test_every_release_spent_its_epsilon(ci_run):
    # The engine checks each ledger; here: every DP row carries an ε of the grid.
    cfg, rows, _ = ci_run
    dp = rows[rows["epsilon"].notna()]
    assert np.allclose(np.sort(dp["epsilon"].unique()), np.exp(cfg["study"]["log_epsilon"]))
    assert set(rows.loc[rows["epsilon"].isna(), "method"]) == {"Ori", "MS"}


def test_unusable_repeats_only_from_degenerate_releases(ci_run):
    _, rows, _ = ci_run
    bad = rows[~rows["usable"]]
    assert (bad["variance"] == 0).all()
    assert bad["estimate"].isin([0.0, 1.0]).all()
