"""Bi & Shen ParaEst (S1's discrete means at ε = 1, n from 100 to 2000): the claims at
profile=ci give the verdicts of profile=paper, NP and DIP agree with an exact oracle in every
cell (at ci and in the committed paper-profile table), the tables carry every cell and the
paper's quoted range, and the figure draws one panel per distribution."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from study_helpers import REPORT, assert_verdicts

from experiments.bi_shen.paraest.claims import CLAIMS
from experiments.bi_shen.paraest.figures import error_against_n
from experiments.bi_shen.paraest.tables import POOLED, paraest_grid, quoted

#: Claims whose statistic sits within 2 MCSE of its threshold at the ci count (200 replicates):
#: dip-near-np (a cell's DIP/NP has an MCSE ≈ 0.075 there, half the ±0.15 band) and dip-fastest
#: (UNDECIDED at profile=paper too)
MAY_BE_UNDECIDED = ("dip-near-np", "dip-fastest")

#: the law of the sum of n draws of each distribution of conf/study/bi_shen_s1.yaml, and its mean
SUM_LAW = {"bernoulli": (lambda n: stats.binom(n, 0.1), 0.1),
           "binomial": (lambda n: stats.binom(5 * n, 0.5), 2.5),
           "poisson": (lambda n: stats.poisson(3 * n), 3.0),
           "geometric": (lambda n: stats.nbinom(n, 0.2), 4.0)}  # failures: mean 4


def exact_abs_mean_error(dist: str, n: int) -> float:
    """E|Z̄ − E Z| for n i.i.d. draws, summed over the exact law of ΣZ (the oracle: a known-F DIP
    release is i.i.d. F, so its error has NP's law)."""
    law, mean = SUM_LAW[dist]
    s = law(n)
    k = np.arange(0, int(s.ppf(1 - 1e-14)) + 1)
    return float(np.sum(s.pmf(k) * np.abs(k / n - mean)))


@pytest.fixture(scope="module")
def paraest(ci_sweep_of):
    return ci_sweep_of("bi_shen_paraest")


def test_paraest_claims_at_ci_match_paper_profile(paraest):
    assert_verdicts(CLAIMS, paraest[2], "bi_shen_paraest", MAY_BE_UNDECIDED, paper="bi_shen")


def _assert_matches_oracle(g: pd.DataFrame) -> None:
    g = g[g["method"].isin(["NP", "DIP"])]
    assert len(g) == 4 * 6 * 2
    exact = np.array([exact_abs_mean_error(d, int(n)) for d, n in zip(g["dist"], g["n"],
                                                                       strict=True)])
    z = (g["ours"].to_numpy() - exact) / g["mcse"].to_numpy()
    print(np.round(z, 2))
    assert np.all(np.abs(z) < 4), g.assign(exact=exact, z=z)[np.abs(z) >= 4]


def test_np_and_dip_match_the_exact_mean_error_at_ci(paraest):
    _assert_matches_oracle(paraest_grid(paraest[2]))


def test_committed_paper_table_matches_the_exact_mean_error():
    _assert_matches_oracle(pd.read_csv(REPORT / "bi_shen" / "report" / "bi_shen_paraest"
                                       / "tables" / "grid.csv"))


def test_exact_oracle_is_the_known_closed_form():
    """Bernoulli, n = 1: E|Z − p| = 2p(1 − p); Poisson(3n) at n = 1 by direct summation."""
    assert exact_abs_mean_error("bernoulli", 1) == pytest.approx(2 * 0.1 * 0.9, rel=1e-12)
    k = np.arange(200)
    assert exact_abs_mean_error("poisson", 1) == pytest.approx(
        float(np.sum(stats.poisson(3).pmf(k) * np.abs(k - 3))), rel=1e-12)


def test_tables_have_every_cell_and_the_paper_range(paraest):
    g = paraest_grid(paraest[2])
    assert len(g) == 4 * 6 * 7  # 4 distributions, 6 sizes, NP + 6 methods
    assert g["ours"].notna().all() and (g["epsilon"] == 1).all()
    assert (g.loc[g["method"] == "DIP", "dip_improvement_pct"] == 0).all()
    q = quoted(paraest[2]).set_index("method")
    for m in ("LRM", "OPM", "EXM", POOLED):
        assert (q.loc[m, "paper_improvement_min_pct"],
                q.loc[m, "paper_improvement_max_pct"]) == (41.2, 1874.7)
    three = q.loc[["LRM", "OPM", "EXM"]]
    assert q.loc[POOLED, "ours_improvement_min_pct"] == three["ours_improvement_min_pct"].min()
    assert q.loc[POOLED, "ours_improvement_max_pct"] == three["ours_improvement_max_pct"].max()
    assert pd.isna(q.loc["NP", "paper_improvement_min_pct"])


def test_figure_has_a_panel_per_distribution_and_a_line_per_method(paraest):
    fig = error_against_n(paraest[2])
    axes = fig.get_axes()
    assert [a.get_title() for a in axes] == ["Bernoulli", "Binomial", "Poisson", "Geometric"]
    for ax in axes:
        assert len(ax.containers) == 5  # NP, DIP, LRM, OPM, EXM with error bars
    assert [t.get_text() for t in axes[-1].get_legend().get_texts()] == [
        "NP", "DIP", "LRM", "OPM", "EXM"]
