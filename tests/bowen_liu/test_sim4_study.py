"""Bowen & Liu Simulation 4 (SLOMAG): the data-generating process against Supp. Table 6 and the
spec's derived cell counts, the MS / MODIPS-Correct / MODIPS-Wrong pieces, the prepare hook
through the engine, and the claims at profile=ci against their profile=paper verdicts."""

import numpy as np
import pytest
from study_helpers import assert_verdicts

from experiments.bowen_liu.sim4.claims import CLAIMS
from experiments.bowen_liu.sim4.model import SlomagModel, decode_cells, encode_cells
from experiments.bowen_liu.sim4.paper_numbers import SUPP_TABLE_6
from experiments.bowen_liu.sim4.study import Simulation4, analyse_sets
from harness.config import load
from harness.engine.aggregate import read_diagnostics
from harness.engine.grid import Task
from harness.engine.study import load_study
from harness.engine.task import run_task
from harness.inference import combine
from harness.models import GeneralLocationModel

SCENARIO = {"n": 1000}
#: spec §6 item 19: sorted mean w-cell counts of the stated DGP (0/1 coding), 2·10⁶ draws
SPEC_SORTED_MEANS = (6.8, 18.5, 19.2, 24.1, 53.9, 69.2, 76.9, 84.2, 89.4, 163.7, 195.4, 198.6)
#: the same expectation computed independently of the harness (2·10⁶ draws of z, the W's
#: integrated out exactly: 1000·E[P(w1|z)P(w2|z,w1)P(w3|z,w1,w2)], MC SE < 0.05). It differs
#: from the spec's values by up to 1.6 in three cells (89.4 → 90.96, 195.4 → 193.46,
#: 198.6 → 200.28): the spec's numbers are off, not the DGP (docs/bowen_liu.md, Simulation 4)
EXPECTED_SORTED_MEANS = (6.48, 18.28, 19.59, 23.97, 53.88, 68.89, 76.84, 84.16, 90.96, 163.2,
                         193.46, 200.28)


@pytest.fixture(scope="module")
def study() -> Simulation4:
    return load_study(load(["study=bowen_liu_sim4", "profile=ci"])["study"])


@pytest.fixture(scope="module")
def data(study):
    return study.generate(SCENARIO, np.random.default_rng(20200501), 2000)


def test_cell_coding_round_trips():
    w1, w2, w3 = np.meshgrid([0, 1], [0, 1], [0, 1, 2], indexing="ij")
    cells = encode_cells(w1, w2, w3)
    assert sorted(cells.ravel().tolist()) == list(range(12))
    back = decode_cells(cells)
    assert all(np.array_equal(a, b) for a, b in zip(back, (w1, w2, w3), strict=True))


def test_estimands_are_the_paper_constants(study):
    truth = study.estimands(SCENARIO)
    assert len(truth) == 22
    assert [truth[f"beta2_{i}"] for i in range(4)] == [-2, -1, 1.5, 0.5]
    assert [truth[f"beta4_{i}"] for i in range(5)] == [0.1, -1, -0.5, 0, 1.5]
    assert truth["rho"] == 0.5 and truth["mu1"] == 0.0


def test_cell_counts_match_the_spec_and_supp_table_6(data):
    counts = data.cell_counts()
    assert np.all(counts.sum(axis=1) == 1000)
    means = np.sort(counts.mean(axis=0))
    se = counts.std(axis=0)[np.argsort(counts.mean(axis=0))] / np.sqrt(counts.shape[0])
    paper = np.sort([v[1] for v in SUPP_TABLE_6.values()])
    print("\nsorted mean w-cell counts\n ours     ", np.round(means, 2), "\n expected",
          EXPECTED_SORTED_MEANS, "\n spec    ", SPEC_SORTED_MEANS, "\n paper   ", paper)
    # the stated DGP: within MC error of the independently computed expectation
    assert np.all(np.abs(means - EXPECTED_SORTED_MEANS) <= 4 * se + 0.1)
    assert np.all(np.abs(means - SPEC_SORTED_MEANS) < 2)
    # the paper's Table 6 is close but not identical (spec §6 item 19): within 11 records
    # (the largest gaps, ≈ 10, are the paper's 94.29 / 59.18 against 84.1 / 69.1)
    assert np.all(np.abs(means - paper) < 11)
    assert np.abs(means - paper).max() > 1  # ... and not the same: a finding, kept


def test_z_is_clamped_bivariate_normal(study, data):
    z = data.values
    assert z.min() >= -4 and z.max() <= 4
    r = np.corrcoef(z.reshape(-1, 2).T)[0, 1]
    assert r == pytest.approx(0.5, abs=0.005)


def test_ori_analysis_covers(study, data):
    """Firth (W3 by two baseline-category fits) and the marginal moments on the original data:
    95% intervals cover at about 0.95 on average over the 22 estimands (400 replicates)."""
    sub = data.values[:400, None], data.cells[:400, None]
    est, var, conv, sing = analyse_sets(*sub)
    assert conv.all() and not sing.any()
    pooled = combine(est, var, rule="partial")
    truth = np.array(list(study.estimands(SCENARIO).values()))
    cover = ((pooled.ci_low <= truth) & (truth <= pooled.ci_high)).mean(axis=0)
    print("\nOri coverage per estimand", np.round(cover, 3))
    assert cover.mean() == pytest.approx(0.95, abs=0.02)
    assert cover.min() > 0.89


def test_ms_normal_part_is_the_inverse_wishart_posterior():
    """Σ ~ IW(n, n·S): E Σ = n·S/(n − 3); μ ~ N(z̄, Σ/n)."""
    model = SlomagModel()
    n, reps = 1000, 20000
    stats = {"mean_1": np.full(reps, 0.1), "mean_2": np.full(reps, -0.2), "S11": np.full(reps, 1.2),
             "S22": np.full(reps, 0.8), "S12": np.full(reps, 0.5)}
    mu, sigma = model.draw_normal(stats, n, np.random.default_rng(0))
    expect = n / (n - 3) * np.array([[1.2, 0.5], [0.5, 0.8]])
    assert sigma.mean(axis=0) == pytest.approx(expect, abs=4 * 0.0012)
    assert mu.mean(axis=0) == pytest.approx([0.1, -0.2], abs=4 * np.sqrt(1.2 / n / reps))
    assert mu[:, 0].var() == pytest.approx(1.2 * n / (n - 3) / n, rel=0.05)


def test_modips_correct_pieces(study):
    """Sensitivities 8/n and 64/n, normalised predictors (‖x‖ ≤ 1) and the λ prior."""
    model = study.slomag_model(prior=True)
    assert model.prior_precision == 0.5
    data = study.generate(SCENARIO, np.random.default_rng(1), 3)
    stats = model.sufficient_statistics(data)
    assert [s.sensitivity for s in stats] == pytest.approx([8e-3, 8e-3, 64e-3, 64e-3, 64e-3])
    assert all(s.budget_share == 1 / 8 for s in stats)
    w1, w2, _ = decode_cells(data.cells)
    for x in model.scaled_designs(data.values, w1, w2):
        assert np.linalg.norm(x, axis=-1).max() <= 1 + 1e-12
    assert model.norms() == pytest.approx((np.sqrt(33), np.sqrt(34), np.sqrt(35)))


def test_glom_sigma_source_marginal_uses_the_marginal_ssp():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((2, 300, 2)) + np.repeat([[0.0, 0.0], [3.0, 3.0]], 150, axis=0)
    cells = np.repeat([0, 1], 150)[None].repeat(2, 0)
    from harness.data import RecordBatch

    data = RecordBatch(z, cells, 2, ("z1", "z2"))
    box = (np.full((2, 2), -8.0), np.full((2, 2), 8.0))
    within = GeneralLocationModel(*box).summaries(data)["cov"]
    marginal = GeneralLocationModel(*box, sigma_source="marginal").summaries(data)["cov"]
    for r in range(2):
        expect = np.cov(z[r].T) * 299 / 298
        assert marginal[r] == pytest.approx(expect, rel=1e-10)
        assert within[r, 0, 0] < 0.5 * marginal[r, 0, 0]  # cell means differ by 3


def test_prepare_hook_runs_once_per_task_and_is_reproducible(study, monkeypatch):
    cfg = load(["study=bowen_liu_sim4", "profile=ci", "study.log_epsilon=[-1,0,1]"])
    st = load_study(cfg["study"])
    task = Task(study=st.name, scenario=(("n", 1000),), block=0, block_size=8, n_replicates=8,
                method="MODIPS-Correct", fingerprint="test")
    calls = []
    from experiments.bowen_liu.sim4.synthesizer import SlomagModips

    original = SlomagModips.prepare

    def counted(self, data, rng):
        calls.append(1)
        return original(self, data, rng)

    monkeypatch.setattr(SlomagModips, "prepare", counted)
    a = run_task(st, task, cfg).rows
    assert len(calls) == 1  # once for the three ε
    b = run_task(st, task, cfg).rows
    cols = ["estimate", "variance", "ci_low", "ci_high"]
    assert np.array_equal(a[cols].to_numpy(), b[cols].to_numpy(), equal_nan=True)


# --- end to end at profile=ci ------------------------------------------------------------------


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of("bowen_liu_sim4")


#: Claim 6a-MW-marginal asks for the largest coverage over ε of σ1², σ2² and ρ to stay below
#: 0.80; at profile=paper (1000 replicates) it is 0.763 (MCSE 0.013), 2.8 MCSE from the
#: threshold. At the ci count (250, MCSE about 0.026) the claim now says so itself: UNDECIDED
#: (largest CP 0.816 ± 0.025). Likewise UNDECIDED at ci, their statistics within 2 MCSE of the
#: threshold: 2b (mean |bias| of the β's at ln ε = −4, MODIPS-Correct 1.19 ± 0.51 vs 1.05 and
#: 0.80), 5a (the |bias| of μ of NP-DIPS and MODIPS-Correct, both near 0, differ by less than
#: 2 MCSE in every cell) and 5c (smallest μ CP of MODIPS-Correct 0.912 vs 0.90).
MAY_BE_UNDECIDED_AT_CI = ("2b", "5a", "5c", "6a-MW-marginal")


@pytest.mark.slow
def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], "bowen_liu_sim4", MAY_BE_UNDECIDED_AT_CI)


@pytest.mark.slow
def test_undecided_claim_sits_within_monte_carlo_error_of_its_threshold(ci_run):
    m = ci_run[2]
    cov = m[(m["method"] == "MODIPS-Wrong-marginal") & (m["metric"] == "coverage")
            & m["estimand"].isin(["sigma1_sq", "sigma2_sq", "rho"])]
    top = cov.loc[cov["value"].idxmax()]
    print(f"largest CP of MODIPS-Wrong-marginal over Σ and ε: {top['value']:.3f} "
          f"({top['estimand']}, ln ε = {top['log_epsilon']:g}, MCSE {top['mcse']:.3f})")
    assert abs(top["value"] - 0.80) <= 3 * top["mcse"]


@pytest.mark.slow
def test_ci_run_rows_and_tables(ci_run):
    cfg, rows, _ = ci_run
    assert set(rows["method"]) == set(cfg["study"]["roster"])
    assert rows["estimand"].nunique() == 22
    base = rows[rows["method"].isin(["Ori", "MS"])]
    assert base["usable"].mean() > 0.999
    from experiments.bowen_liu.sim4.tables import supp_table_6, supp_table_7

    diag = read_diagnostics(cfg)
    t6, t7 = supp_table_6(diag), supp_table_7(diag)
    assert len(t6) == 12 and len(t7) == 12
    assert t7["median_match"].sum() >= 6
