"""The simulation's STEPS split (steps_sim ``tree_mode``): by default the paper's rule, the
grouped split of §2.2.3 (after Eqn 5) that §4.1 says the simulation used: the exponential
mechanism over the 15 two-cluster splits of X1..X4 and binned Y with utility |mean AIC(C1) −
mean AIC(C2)|, δ_u = 4, at r·ε/m per set, the cluster of lower mean AIC (higher importance) in
layer 1. Checked on a hand case, with planted wrong rules that the checks must reject.

The hand case: every record at the first level of every attribute (X1..X4 with 2, 3, 4, 5
levels, Y in the first of its 15 bins). Each univariate log-likelihood is then 0 (one level
holds all n records: log n! − log n! + n log 1), so AIC_j = 2K_j = 4, 6, 8, 10, 30, and the
utility of a split is the difference of the clusters' mean K times 2, e.g. {X1..X4} | {Y}:
|7 − 30| = 23 (the largest), {X1, X2, X3} | {X4, Y}: |6 − 20| = 14, the split the paper reports
{X1, X2, X4} | {X3, Y}: |20/3 − 19| = 37/3."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from harness import config
from harness.data import RecordBatch
from harness.engine.study import load_study
from harness.privacy import PrivacyLedger
from harness.synthesizers import importance, steps

SCENARIO = {"model": "main_effect", "n": 4000}
AIC = (4.0, 6.0, 8.0, 10.0, 30.0)  # 2K of X1..X4 and Y's 15 bins (module docstring)
R = 1000  # replicates of the law check, one draw each: the planted δ_u = 2 gives χ² p ≈ 0


@pytest.fixture(scope="module")
def study():
    return load_study(config.load(["study=steps_sim", "profile=ci"])["study"])


def _hand_data(study, r: int) -> RecordBatch:
    schema = study.schema(SCENARIO)
    values = np.zeros((r, 20, 5))
    values[..., 4] = schema.column("Y").lower  # the first of Y's bins
    return RecordBatch(values, columns=schema.names, schema=schema)


def _splits(study, label: str, r: int, eps_set: float, seed: int = 0):
    """The levels STEPS chooses for ``r`` replicates of the hand data, and the ledger."""
    syn = study.method(label, SCENARIO)
    data = _hand_data(study, r)
    coding = syn.coding(data)
    ledger = PrivacyLedger()
    groups = syn._structures(coding.encode(data.values), coding, None, eps_set, ledger,
                             np.random.default_rng(seed), 0)
    levels = [None] * r
    for idx, layout in groups:
        for k in idx:
            levels[k] = layout.levels
    return levels, ledger


def _hand_law(delta_u: float, eps_sel: float) -> dict:
    """The paper's rule written out again here: P(layers) ∝ exp(u ε_sel / (2 δ_u)) over the
    splits, keyed by (layer 1, layer 2), the cluster of lower mean AIC first."""
    weights = {}
    for size in range(1, 5):
        for c1 in itertools.combinations(range(5), size):
            c2 = tuple(a for a in range(5) if a not in c1)
            m1, m2 = np.mean([AIC[a] for a in c1]), np.mean([AIC[a] for a in c2])
            key = (c1, c2) if m1 < m2 else (c2, c1)
            weights[key] = math.exp(abs(m1 - m2) * eps_sel / (2 * delta_u))
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


def check_paper_split(study, label="STEPS"):
    """The roster's STEPS on the hand case: (a) at a large ε it picks the split of largest
    utility, {X1..X4} in layer 1 and Y in layer 2 (module docstring); (b) the selection spends
    r·ε_set = 0.1·ε_set once, with δ_u = 4."""
    eps_set = 400.0  # ε_sel = 40: the runner-up (u = 14) has weight e^(-9·40/8) ≈ 3e-20
    levels, ledger = _splits(study, label, 5, eps_set)
    assert all(lv == ((0, 1, 2, 3), (4,)) for lv in levels), levels
    (entry,) = ledger.entries
    assert entry.mechanism == "exponential" and entry.sensitivity == 4.0
    assert entry.epsilon == pytest.approx(0.1 * eps_set, rel=1e-12)


def test_hand_utilities_are_the_paper_l1_difference_of_mean_aic():
    splits = importance.two_cluster_splits(5)
    u = importance.split_utility(np.array(AIC), splits)
    by_cluster = {tuple(np.flatnonzero(s)): v for s, v in zip(splits, u, strict=True)}
    assert by_cluster[(0, 1, 2, 3)] == pytest.approx(23.0)
    assert by_cluster[(0, 1, 2)] == pytest.approx(14.0)
    assert by_cluster[(0, 1, 3)] == pytest.approx(37 / 3)  # the split the paper reports
    assert u.max() == pytest.approx(23.0) and len(u) == 15


def test_roster_steps_is_the_paper_rule_and_picks_its_split(study):
    check_paper_split(study)


def test_split_law_is_the_exponential_mechanism_of_the_paper(study):
    """At ε_sel = 0.8 (ε_sel / (2 δ_u) = 0.1) the split is random: the frequencies over R
    replicates (one draw each) match the hand law (χ² goodness of fit), which puts 0.23 on
    {X1..X4} | {Y}; δ_u = 2 (a planted sharper rule) puts 0.53 there."""
    law = _hand_law(4.0, 0.8)
    levels, _ = _splits(study, "STEPS", R, 8.0, seed=1)
    keys = list(law)
    observed = np.array([sum(lv == k for lv in levels) for k in keys])
    assert observed.sum() == R  # every draw is one of the 15 splits, lower mean AIC first
    p = stats.chisquare(observed, R * np.array([law[k] for k in keys])).pvalue
    print("top split", observed[keys.index(((0, 1, 2, 3), (4,)))] / R, "χ² p =", p)
    assert p > 1e-4


def test_fixed_split_option_keeps_the_reported_tree_and_spends_nothing(study):
    levels, ledger = _splits(study, "STEPS-fixed", 3, 8.0)
    assert all(lv == ((0, 1, 3), (2, 4)) for lv in levels)
    assert not ledger.entries  # r reserved, not spent: the release claims (1 − r)·ε
    assert study.method("STEPS-fixed", SCENARIO).claimed_epsilon(8.0) == pytest.approx(7.2)


def _sum_utility(aic, splits):
    s = splits.astype(float)
    return np.abs(aic @ s.T - aic @ (1 - s).T)


@pytest.mark.parametrize("planted", ["sum_not_mean", "higher_aic_first", "delta_u_2"])
def test_planted_wrong_rules_fail_the_checks(study, planted, monkeypatch):
    """Each planted rule must be caught: the l1 difference of cluster sums (picks {X1} | the
    rest, u = 52), the cluster of higher mean AIC in layer 1, and δ_u = 2 (twice as sharp)."""
    if planted == "sum_not_mean":
        monkeypatch.setattr(steps, "split_utility", _sum_utility)
    elif planted == "higher_aic_first":
        monkeypatch.setattr(steps, "aic_univariate", lambda c: -importance.aic_univariate(c))
    else:
        monkeypatch.setitem(steps.SELECTION_DELTA_U, "grouped_split", 2.0)
    with pytest.raises(AssertionError):
        if planted == "delta_u_2":
            test_split_law_is_the_exponential_mechanism_of_the_paper(study)
        else:
            check_paper_split(study)


def test_split_law_table_is_a_law_per_cell_and_flags_the_reported_split():
    """The report's table of which tree STEPS builds (experiments/steps/sim/tables.py): per
    (model, n) the 15 splits once each, every ε column a probability law, ranks by utility,
    and the split the paper reports flagged once per (model, n)."""
    from experiments.steps.sim.tables import SPLIT_SETTINGS, split_law

    table = split_law({**SPLIT_SETTINGS, "draws": 3})["split_law"]
    cols = [c for c in table.columns if c.startswith("P(ε:")]
    assert cols == ["P(ε:0.5)", "P(ε:2)", "P(ε:5)", "P(ε:10)"]
    for _, cell in table.groupby(["model", "n"]):
        assert len(cell) == 15 and list(cell["rank"]) == list(range(1, 16))
        np.testing.assert_allclose(cell[cols].sum(), 1.0, rtol=1e-12)
        assert (cell["reported"] == "yes").sum() == 1
        assert cell["mean_u"].is_monotonic_decreasing
        top = cell.iloc[0]
        assert (top["layer_1"], top["layer_2"]) == ("X1, X2, X3, X4", "Y")  # Y's AIC dominates
        assert (cell[cols].diff(axis=1).iloc[0, 1:] > 0).all()  # sharper as ε grows
