"""The STEPS simulation study (spec 003 §4.1, §5.2) at profile=ci: the claims give the verdicts
of profile=paper, every method sees the same original data at every ε (common random numbers),
releases claim and spend their ε, the Model 2 ridge from cell sums equals the design fit, the
summary table has every cell, and bad config is one line with nothing written."""

import numpy as np
import pytest
from study_helpers import assert_bad_run_input, assert_verdicts

from experiments.steps import simulation as sim
from experiments.steps.sim.claims import CLAIMS
from experiments.steps.sim.study import Simulation
from experiments.steps.sim.tables import summary
from harness import config
from harness.engine.study import load_study
from harness.inference.least_squares import ridge_gcv

STUDY = "steps_sim"

#: claims decided at profile=paper (200 replicates) whose margins are within 2 MCSE at the ci
#: count (6 replicates): PrivBayes-DS2019's |CP − .95| against STEPS/UH-mod and across ε, and
#: the DP PrivBayes's CP drift (coverage MCSEs of ~0.1 per coefficient at R = 6); and STEPS's
#: Model 1 RMSE against UH-mod's beside the DP PrivBayes (a FAIL at paper by a margin of ~0.01
#: over the grid, 0.283 against 0.272; at ci, with the paper's AIC/EM split as STEPS, 0.281
#: against 0.271, within 2 MCSE); the ci run leaves all four UNDECIDED, every other claim gets
#: its paper-profile verdict
MAY_BE_UNDECIDED_AT_CI = ("m1_privbayes_best_bias_cp_pred_ds2019",
                          "m1_privbayes_cp_drifts_with_eps_ds2019",
                          "m1_privbayes_cp_drifts_with_eps_correct",
                          "m1_steps_best_rmse_correct")


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    return ci_sweep_of(STUDY)


def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], STUDY, MAY_BE_UNDECIDED_AT_CI, paper="steps")


def test_rows_pool_m_sets_at_the_claimed_epsilon(ci_run):
    _, rows, metrics = ci_run
    dp = rows[rows["method"] != "Ori"]
    assert (dp["m"] == 4).all() and (rows.loc[rows["method"] == "Ori", "m"] == 1).all()
    fixed = dp[dp["method"] == "STEPS-fixed"]  # fixed_paper: r = 0.1 reserved, not spent
    assert len(fixed) and len(dp[dp["method"] == "STEPS"])
    np.testing.assert_allclose(fixed["epsilon"], 0.9 * fixed["privacy"], rtol=1e-12)
    other = dp[dp["method"] != "STEPS-fixed"]  # STEPS (the paper's AIC/EM split) spends r·ε
    np.testing.assert_allclose(other["epsilon"], other["privacy"], rtol=1e-12)
    for model in sim.MODELS:
        names = set(rows.loc[rows["model"] == model, "estimand"])
        assert names == set(sim.coefficient_names(model))
    table = summary(metrics)
    dp_methods = sorted(set(rows["method"]) - {"Ori"})
    assert len(table) == 2 * 2 * (4 * len(dp_methods) + 1)
    assert table[["rmse", "cp_gap", "pred_rmse"]].notna().all().all()


def test_every_method_and_epsilon_sees_the_same_original_data():
    """Common random numbers (DESIGN §5): the data of a block do not depend on the method or ε,
    and the test part is drawn after the train part from the same stream."""
    cfg = config.load(["study=steps_sim", "profile=ci"])
    study = load_study(cfg["study"])
    scenario = {"model": "main_effect", "n": 4000}
    a = study.generate(scenario, np.random.default_rng(5), 2)
    b = study.generate(scenario, np.random.default_rng(5), 2)
    np.testing.assert_array_equal(a.train.values, b.train.values)
    assert a.part("test").values.shape == (2, 100, 5)
    lo, hi = study.schema(scenario).column("Y").lower, study.schema(scenario).column("Y").upper
    edges = sim.y_edges("main_effect")
    assert (lo, hi) == (edges[0], edges[-1])


def test_model_2_ridge_from_cell_sums_equals_the_design_fit():
    study = Simulation({"name": "x", "grid": {}, "roster": {}})
    rng = np.random.default_rng(0)
    data = [sim.simulate("saturated", 400, rng) for _ in range(3)]
    x = np.stack([d[0] for d in data])
    y = np.stack([d[1] for d in data])
    beta, var = study.fit("saturated", x, y)
    design = np.stack([sim.design("saturated", d[0]) for d in data])
    want, want_var, _ = ridge_gcv(design, y, study.lambdas())
    np.testing.assert_allclose(beta, want, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(var, want_var, rtol=1e-10, atol=1e-13)


def test_privbayes_sets_decode_y_within_its_bins():
    cfg = config.load(["study=steps_sim", "profile=ci"])
    study = load_study(cfg["study"])
    scenario = {"model": "main_effect", "n": 4000}
    data = study.generate(scenario, np.random.default_rng(1), 1)
    pb = study.method("PrivBayes-DS2019", scenario)
    rel = pb.release(data.train, 10.0, np.random.default_rng(2))
    y = rel.sets.values[..., 4]
    col = study.schema(scenario).column("Y")
    assert rel.sets.values.shape == (1, 4, 4000, 5)
    assert (y >= col.lower).all() and (y <= col.upper).all()
    assert len(np.unique(y)) > 15 * 100  # uniform within bins, not bin midpoints
    assert rel.epsilon == 10.0 and rel.ledger.understated


@pytest.mark.parametrize("override, words", [
    ("study.grid.model=[linear]", ["study.grid.model", "main_effect, saturated"]),
    ("study.roster.STEPS.tree_mode=greedy", ["study.roster.STEPS.tree_mode", "fixed_paper"]),
    ("study.steps_levels=[[X1],[X2]]", ["study.steps_levels"]),
    ("study.ridge_log10_lambda=[2,-4,61]", ["study.ridge_log10_lambda"]),
])
def test_bad_config_is_one_line_and_writes_nothing(tmp_path, override, words):
    assert_bad_run_input(tmp_path / "out", ["study=steps_sim", "profile=ci", override], words)


def test_figures_2_and_3_have_a_legend_of_every_line(ci_run, monkeypatch):
    """Figure 2's legend names every coefficient line (the same style in every panel) and the
    reference and prediction lines; Figure 3's names what a box shows and the same lines.
    The final layout pass (``Figure.tight_layout``, which measures every tick label's text:
    ~45 % of drawing the two figures) only moves the axes, and no label, line, colour or legend
    text read here; it is skipped (the figures are drawn in full, layout included, by the
    report of every steps_sim run, e.g. tests/harness/test_method_subsets.py)."""
    from matplotlib.figure import Figure

    from experiments.steps.sim.figures import FIGURES

    monkeypatch.setattr(Figure, "tight_layout", lambda self, *a, **k: None)

    _, _, metrics = ci_run
    fig = FIGURES["figure_2"](metrics)
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    drawn = {line.get_label() for ax in fig.axes for line in ax.lines
             if not line.get_label().startswith("_")}
    assert set(sim.coefficient_names("main_effect")) <= drawn <= set(labels)
    assert "prediction RMSE" in labels and len(labels) == 11 + 2
    styles = {}
    for ax in fig.axes:
        for line in ax.lines:
            styles.setdefault(line.get_label(), set()).add((line.get_color(),
                                                            line.get_linestyle()))
    assert all(len(s) == 1 for s in styles.values())  # one style per coefficient everywhere
    (legend,) = FIGURES["figure_3"](metrics).legends
    assert any("120 cell means" in t.get_text() for t in legend.get_texts())
