"""Bowen & Liu Simulation 3 (GLOM): the data-generating process against the paper's Supp. Tables
3–5, the marginal probabilities Π under both cell-order conventions (spec §6 item 14), the
analysis, and the claims at profile=ci against their profile=paper verdicts."""

import numpy as np
import pytest
from study_helpers import assert_verdicts

from experiments.bowen_liu.sim3.claims import CLAIMS
from experiments.bowen_liu.sim3.paper_numbers import SUPP_TABLE_4, SUPP_TABLE_5
from experiments.bowen_liu.sim3.study import (
    MARGINALS,
    Simulation3,
    cell_levels,
    marginal_indicator,
)
from harness.config import load
from harness.engine.aggregate import read_diagnostics
from harness.engine.study import load_study
from harness.inference import combine

SCENARIO = {"n": 1000}


@pytest.fixture(scope="module")
def study() -> Simulation3:
    return load_study(load(["study=bowen_liu_sim3", "profile=ci"])["study"])


def test_cell_order_conventions():
    b = cell_levels((2, 3, 4), "B")  # w1 fastest
    assert b[:4].tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]
    a = cell_levels((2, 3, 4), "A")  # w3 fastest
    assert a[:5].tolist() == [[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 0, 3], [0, 1, 0]]
    for lv in (a, b):
        assert len({tuple(r) for r in lv.tolist()}) == 24
    assert marginal_indicator((2, 3, 4), "B").sum(axis=0).tolist() == [12, 8, 8, 6, 6, 6]


@pytest.mark.parametrize("order, expected", [
    ("B", (0.517, 0.274, 0.359, 0.289, 0.252, 0.228)),  # spec §6 item 14
    ("A", (0.541, 0.349, 0.265, 0.321, 0.211, 0.196)),
])
def test_true_marginal_probabilities_under_both_conventions(study, order, expected):
    pi = study.pi() @ marginal_indicator((2, 3, 4), order)
    print(f"\nΠ ({order}) ours {np.round(pi, 4)} spec {expected}")
    assert pi == pytest.approx(expected, abs=6e-4)
    if order == "B":
        truth = study.estimands(SCENARIO)
        assert [truth[k] for k in MARGINALS] == pytest.approx(expected, abs=6e-4)


def test_estimands_are_table_3(study):
    truth = study.estimands(SCENARIO)
    assert len(truth) == 57
    assert truth["mu1_10"] == -2.440 and truth["mu2_06"] == 2.287
    assert truth["sigma1_sq"] == 1.0 and truth["rho"] == 0.5


@pytest.fixture(scope="module")
def data(study):
    return study.generate(SCENARIO, np.random.default_rng(2020), 5000)


def test_cell_counts_match_supp_table_4(data):
    """Means per cell within 4 combined MC SEs of the paper's 5000-repeat means (our SD stands in
    for the paper's); medians within 1; mins and maxes are extremes and are only printed."""
    counts = data.cell_counts()
    print("\ncell  paper(min mean med max)      ours(min mean med max)    z(mean)")
    worst = 0.0
    for k in range(24):
        v = counts[:, k]
        p = SUPP_TABLE_4[k + 1]
        se = v.std(ddof=1) / np.sqrt(v.size) * np.sqrt(2)
        z = (v.mean() - p[1]) / se
        worst = max(worst, abs(z))
        print(f"{k + 1:4d}  {p[0]:3d} {p[1]:7.3f} {p[2]:3d} {p[3]:3d}   "
              f"{v.min():3d} {v.mean():7.3f} {np.median(v):5.1f} {v.max():3d}   {z:+.2f}")
        assert abs(z) < 4, (k + 1, v.mean(), p[1])
        assert abs(np.median(v) - p[2]) <= 1
    assert worst > 0  # a real comparison happened


def test_records_are_clamped_to_cell_boxes_with_sigma(study, data):
    lower, upper = study.bounds()
    lo, hi = lower[data.cells[:200]], upper[data.cells[:200]]
    assert np.all((data.values[:200] >= lo) & (data.values[:200] <= hi))
    est, var = study.analyse(data.with_set_axis(), SCENARIO)
    pooled = combine(est, var)
    names = list(study.estimands(SCENARIO))
    i = {k: names.index(k) for k in ("sigma1_sq", "sigma2_sq", "rho")}
    means = np.nanmean(pooled.estimate, axis=0)
    # clamping at ±4σ removes a negligible tail: within-cell variances ≈ 1, ρ ≈ 0.5
    assert means[i["sigma1_sq"]] == pytest.approx(1.0, abs=0.01)
    assert means[i["rho"]] == pytest.approx(0.5, abs=0.01)
    cover = np.nanmean((pooled.ci_low <= np.array(list(study.estimands(SCENARIO).values())))
                       & (np.array(list(study.estimands(SCENARIO).values())) <= pooled.ci_high),
                       axis=0)
    print("\nOri coverage: min", cover.min().round(3), "mean", cover.mean().round(3))
    assert 0.93 <= cover.mean() <= 0.97


def test_bin_counts_reproduce_most_medians_of_supp_table_5(study, data):
    """Scott 2-D bins with the pooled within-cell SD (spec §2.2/§8: 19 of 24 medians match in a
    2000-repeat re-check). We require at least 18 and print every cell."""
    synth = study.method("NP-DIPS", SCENARIO)
    sub = type(data)(data.values[:2000], data.cells[:2000], data.n_cells, data.columns)
    grid = synth.bin_grid(sub, sub.cell_counts(), synth.scott_sd_of(sub))
    total = grid.total
    match = 0
    print("\ncell paper(min mean med max)   ours(min mean med max)")
    for k in range(24):
        v = total[:, k]
        p = SUPP_TABLE_5[k + 1]
        match += np.median(v) == p[2]
        print(f"{k + 1:4d} {p[0]:3d} {p[1]:6.2f} {p[2]:3d} {p[3]:3d}   {v.min():3d} "
              f"{v.mean():6.2f} {np.median(v):5.1f} {v.max():3d}")
    print(f"medians matching: {match} of 24")
    assert match >= 18


# --- end to end at profile=ci ------------------------------------------------------------------


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of("bowen_liu_sim3")


#: Claims UNDECIDED at the ci count (50 replicates): at some ln ε >= -1 the NP-DIPS − MODIPS
#: difference of the group means lies within 2 MCSE of 0 (1a-mu: |bias| at the largest ln ε,
#: excess -0.54 MCSE; 1a-Pi: |bias| at ln ε >= 0, -0.55 MCSE; 1c-Pi: |CP - 0.95|, +0.18 MCSE).
MAY_BE_UNDECIDED_AT_CI = ("1a-mu", "1a-Pi", "1c-Pi")


@pytest.mark.slow
def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], "bowen_liu_sim3", MAY_BE_UNDECIDED_AT_CI)


@pytest.mark.slow
def test_ci_run_rows_and_tables(ci_run):
    cfg, rows, _ = ci_run
    dp = rows[rows["epsilon"].notna()]
    assert np.allclose(np.sort(dp["epsilon"].unique()), np.exp(cfg["study"]["log_epsilon"]))
    assert set(rows["method"]) == {"Ori", "MS", "MODIPS", "NP-DIPS"}
    assert rows["estimand"].nunique() == 57
    # Ori and MS are usable everywhere; dropped cells only make DP cell means unusable
    base = rows[rows["method"].isin(["Ori", "MS"])]
    assert base["usable"].mean() > 0.999
    from experiments.bowen_liu.sim3.tables import supp_table_4, supp_table_5

    diag = read_diagnostics(cfg)
    t4, t5 = supp_table_4(diag), supp_table_5(diag)
    assert len(t4) == 24 and len(t5) == 24
    assert (t4["z_mean"].abs() < 4).all()
    assert t5["median_match"].sum() >= 15
