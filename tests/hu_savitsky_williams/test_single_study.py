"""Hu, Savitsky & Williams, the single-sample runs at profile=ci: the claims give the verdicts of
profile=paper, the rows carry nested m and ε = 2·Δ·m, the one-sample RMSE ratios equal those
recomputed from the interval rows, the tables and figures have the paper's layout, and the
record-level figures replay the sweep's replicate 0 exactly."""

import numpy as np
import pytest
from float_compare import assert_close_ulps
from study_helpers import assert_verdicts

from experiments.hu_savitsky_williams.mc.study import ESTIMANDS
from experiments.hu_savitsky_williams.single import figures
from experiments.hu_savitsky_williams.single.claims import CLAIMS
from experiments.hu_savitsky_williams.single.tables import TABLES
from harness.engine.aggregate import read_diagnostics, read_replicate_metrics

STUDY = "hu_savitsky_williams_single"
#: Claims whose statistic may sit within 2 MCSE of its threshold at the ci count (10 samples):
#: delta-fbs-improves (FBS's median mean-salary ratio Δ 3.4 / 1.8 is 1.02 ± 0.019 at 100 samples
#: against 0.9: at 10 samples the MCSE is ~0.06, so the margin is ~2 MCSE; the ci run gives
#: 0.997 ± 0.052, UNDECIDED) and m-fbs-means-flat (0.963 ± 0.021 at 100 against the band
#: |r − 1| < 0.10: ~0.067 at 10 samples, under 1 MCSE; the ci run happens to PASS it).
MAY_BE_UNDECIDED_AT_CI = ("delta-fbs-improves", "m-fbs-means-flat")


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of(STUDY)


def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], STUDY, MAY_BE_UNDECIDED_AT_CI,
                    paper="hu_savitsky_williams")


def test_rows_carry_nested_m_and_the_epsilon_of_m_sets(ci_run):
    _, rows, _ = ci_run
    syn = rows[rows["method"].isin(["FBS", "FBP"])]
    assert sorted(syn["m"].unique()) == [1, 3, 5]
    assert sorted(syn["privacy"].unique()) == [1.8, 3.4]
    np.testing.assert_allclose(syn["epsilon"], 2 * syn["privacy"] * syn["m"], rtol=1e-12)
    lap = rows[rows["method"] == "Laplace"]
    np.testing.assert_allclose(lap["epsilon"], 2 * lap["privacy"] * 3, rtol=1e-9)


def test_one_sample_ratios_match_the_interval_rows(ci_run):
    """§4.3's RMSE ratio of every cell, recomputed from the pooled interval rows of the method
    and of the confidential sample (same replicate), equals the study's metric rows."""
    cfg, rows, _ = ci_run
    per = read_replicate_metrics(cfg)
    ori = rows[rows["method"] == "ori"].set_index(["replicate", "estimand"])
    for method, delta, m in (("FBS", 1.8, 3), ("FBP", 3.4, 1), ("Laplace", 1.8, 1)):
        r = rows[(rows["method"] == method) & (rows["privacy"] == delta) & (rows["m"] == m)]
        r = r.set_index(["replicate", "estimand"])
        o = ori.loc[r.index]
        want = (np.sqrt((r["estimate"] - r["truth"]) ** 2 + r["variance"])
                / np.sqrt((o["estimate"] - o["truth"]) ** 2 + o["variance"]))
        got = per[(per["method"] == method) & (per["privacy"] == delta) & (per["m"] == m)
                  & per["metric"].str.startswith("rmse_ratio_")]
        got = got.assign(estimand=got["metric"].str.removeprefix("rmse_ratio_")).set_index(
            ["replicate", "estimand"])["value"]
        assert len(got) == len(want) == 54 * rows["replicate"].nunique()
        np.testing.assert_allclose(got.loc[want.index], want, rtol=1e-10)
        med = per[(per["method"] == method) & (per["privacy"] == delta) & (per["m"] == m)
                  & (per["metric"] == "ratio_median_count")].set_index("replicate")["value"]
        counts = want[want.index.get_level_values(1).str.startswith("count_")]
        np.testing.assert_allclose(med, counts.groupby(level=0).median(), rtol=1e-12)


def test_tables_and_violin_figures(ci_run):
    cfg, _, metrics = ci_run
    diag = read_diagnostics(cfg)
    ratios = TABLES["rmse_ratios"](metrics)
    assert len(ratios) == (2 * 2 * 3 + 2) * 2 and ratios.notna().all().all()
    lip = TABLES["lipschitz"](metrics, diag)
    assert len(lip) == 4 and set(lip["unweighted_paper"].dropna()) == {8.89, 9.92}
    assert (lip["lipschitz_realised"] <= lip["delta"]).all()
    assert list(TABLES["weights"](metrics)["method"]) == ["ori", "FBS", "FBP"]
    for name in ("figure5_rmse_ratios", "figure6_rmse_ratios_delta1.8",
                 "figure7_rmse_ratios_delta3.4"):
        fig = figures.FIGURES[name](metrics)
        assert fig is not None and len(fig.axes) == 2, name
    assert len(figures.cell_ratios(metrics, "FBP", "mean", 5, 3.4)) == 27
    assert len(ESTIMANDS) == 54


def test_record_figures_replay_replicate_0_of_the_sweep(ci_run, monkeypatch):
    """The replay behind Figs 3, 4, 8, 9 gives the sweep's own replicate 0: the same tuned
    bounds and unweighted bounds as its diagnostic rows, to rounding (the replay prepares
    replicate 0 alone, the sweep its whole block: two array shapes, whose kernels are the
    CPU's choice)."""
    cfg, _, _ = ci_run
    diag = read_diagnostics(cfg)
    first = diag[(diag["replicate"] == 0) & (diag["privacy"] == 1.8)]
    replay = figures.selected_sample("ci")
    for label in ("FBS", "FBP"):
        d = first[first["method"] == label].set_index("diagnostic")["value"]
        assert_close_ulps(replay.realised[label], d["lipschitz_realised"], ulps=64)
        assert_close_ulps(replay.risk[label].max(), d["lipschitz_unweighted"], ulps=64)
        assert replay.record_bounds[label].max() == replay.realised[label] <= 1.8
        assert replay.smoothed_weights[label].sum() == pytest.approx(replay.weights.sum())
    # the first synthetic set's smoothed weights are the sweep's m = 1 counts of replicate 0
    _, rows, _ = ci_run
    first_set = rows[(rows["replicate"] == 0) & (rows["m"] == 1) & (rows["privacy"] == 1.8)]
    for label in ("FBS", "FBP"):
        est = first_set[first_set["method"] == label].set_index("estimand")["estimate"]
        for cell in range(16):
            name = f"count_F{cell // 2 + 1}_{('Male', 'Female')[cell % 2]}"
            got = replay.smoothed_weights[label][replay.cells == cell].sum()
            assert got == pytest.approx(est[name], rel=1e-12), (label, name)
    monkeypatch.setattr(figures, "REPLAY_PROFILE", "ci")
    for name in ("figure3_lipschitz", "figure4_weights", "figure8_fbs_weights",
                 "figure9_fbp_weights"):
        assert figures.FIGURES[name](None) is not None, name
