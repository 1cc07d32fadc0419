"""STEPS, UH-mod and the flat Laplace sanitizer (spec 003 §2, §3.1, §3.3): the AIC of Lemma 1,
the ledger of every mode (selection and every level spend exactly what they claim; total = ε per
set), the level structures each method builds, releases that respect the schema, and one-line
errors for bad configuration."""

import math

import numpy as np
import pytest
from scipy.stats import multinomial

from harness.data import RecordBatch
from harness.errors import ConfigError
from harness.schema import Schema
from harness.synthesizers import make_synthesizer
from harness.synthesizers.importance import aic_univariate, split_utility, two_cluster_splits
from harness.synthesizers.steps import FIRST_SPLIT, LEVELS

SCHEMA = Schema.from_config({
    "columns": [{"name": "voted", "levels": [0, 1]}, {"name": "registered", "levels": [0, 1]},
                {"name": "college", "levels": [0, 1]}, {"name": "income", "levels": [0, 1, 2]},
                {"name": "y", "bounds": [-4.0, 6.0]}],
    "structural_zeros": [{"voted": 1, "registered": 0}],
})
BINS = {"y": 5}


def _data(r=2, n=300, seed=0):
    rng = np.random.default_rng(seed)
    voted = rng.integers(0, 2, (r, n))
    registered = np.where(voted == 1, 1, rng.integers(0, 2, (r, n)))
    college = (rng.random((r, n)) < 0.2).astype(int)
    income = rng.integers(0, 3, (r, n))
    y = np.clip(rng.normal(income + voted, 1.0), -4, 6)
    values = np.stack([voted, registered, college, income, y], -1).astype(float)
    return RecordBatch(values, columns=SCHEMA.names, schema=SCHEMA)


def test_aic_is_the_full_multinomial_aic_with_fixed_levels():
    counts = np.array([[7.0, 0.0, 3.0, 12.0], [1.0, 1.0, 1.0, 1.0]])
    n = counts.sum(axis=1)
    ref = [-2 * multinomial.logpmf(c, int(t), c / t) + 2 * 4
           for c, t in zip(counts, n, strict=True)]
    np.testing.assert_allclose(aic_univariate(counts), ref, rtol=1e-12)
    assert aic_univariate(counts, n_levels=6)[0] == pytest.approx(ref[0] + 4)


def test_two_cluster_splits_enumerate_each_split_once():
    splits = two_cluster_splits(5)
    assert splits.shape == (15, 5)  # the paper's 2^(5−1) − 1 (spec §2.2(c))
    keys = {tuple(s) for s in splits} | {tuple(~s) for s in splits}
    assert len(keys) == 30 and all(0 < s.sum() < 5 for s in splits)
    u = split_utility(np.array([10.0, 20.0, 30.0, 40.0, 50.0]), splits)
    assert u.max() == pytest.approx(50 - 25)  # {X1..X4} vs {X5}


def _ledger_of(name, params, epsilon=2.0, m=3):
    syn = make_synthesizer(name, m=m, bins=BINS, **params)
    rel = syn.release(_data(), epsilon, np.random.default_rng(1))
    return syn, rel


@pytest.mark.parametrize("name, params, selection, depth", [
    ("flat_laplace", {}, 0.0, 1),
    ("uh_mod", {"depth": 2}, 0.0, 3),
    ("uh_mod", {"depth": 2, "leaf_level": "merged"}, 0.0, 2),
    ("steps", {"order": ["voted", "college"]}, 0.0, 3),
    ("steps", {"order": ["voted", "college", "income"], "depth": 2}, 0.0, 3),
    ("steps", {"ranking": "statistical", "r": 0.1, "selection": "grouped_split"}, 0.1, 2),
    ("steps", {"ranking": "statistical", "r": 0.1, "depth": 2}, 0.1, 3),
])
def test_every_level_and_the_selection_spend_what_they_claim(name, params, selection, depth):
    epsilon, m = 2.0, 3
    syn, rel = _ledger_of(name, params, epsilon, m)
    eps_set = epsilon / m
    assert rel.epsilon == epsilon and math.isclose(rel.ledger.total_epsilon(), epsilon)
    for j in range(m):
        entries = [e for e in rel.ledger.entries if e.set_index == j]
        assert math.isclose(sum(e.epsilon for e in entries), eps_set)
        sel = [e for e in entries if e.mechanism == "exponential"]
        levels = [e for e in entries if e.mechanism == "laplace"]
        assert len(levels) == depth
        if selection == 0:
            assert not sel
        elif params.get("selection") == "grouped_split":  # one split, δ_u = 4 (spec A10)
            assert len(sel) == 1 and sel[0].sensitivity == 4.0
            assert sel[0].epsilon == pytest.approx(selection * eps_set)
        else:  # Algorithm 1: one election per layer, nodes in parallel, δ_u = 2 (Lemma 1)
            assert len(sel) == params["depth"] and all(e.sensitivity == 2.0 for e in sel)
            assert all(e.epsilon == pytest.approx(selection * eps_set / params["depth"])
                       for e in sel)
        for e in levels:  # equal split over the sanitized levels, Δ = 1, scale Δ/ε_level
            eps_level = (1 - selection) * eps_set / depth
            assert e.epsilon == pytest.approx(eps_level) and e.sensitivity == 1.0
            assert e.scale == pytest.approx(1 / eps_level)
    assert np.all(rel.diagnostics[LEVELS] == depth)


def test_given_order_with_reserved_r_claims_what_it_spends():
    """The simulation's fixed order keeps r = 0.1 unspent (spec A3): it claims (1 − r)·ε."""
    syn, rel = _ledger_of("steps", {"order": [["voted", "registered", "income"],
                                              ["college", "y"]], "r": 0.1})
    assert rel.epsilon == pytest.approx(0.9 * 2.0)
    assert math.isclose(rel.ledger.total_epsilon(), 0.9 * 2.0)
    assert all(e.epsilon == pytest.approx(0.9 * 2.0 / 3 / 2) for e in rel.ledger.entries)


def test_releases_keep_the_schema_structural_zeros_and_bins():
    data = _data()
    for name, params in [("flat_laplace", {}), ("uh_mod", {"depth": 3}),
                         ("uh_mod", {"depth": 5, "consistency": "hay_padded"}),
                         ("steps", {"order": ["voted", "college"]}),
                         ("steps", {"ranking": "statistical", "r": 0.2,
                                    "selection": "grouped_split"}),
                         ("steps", {"ranking": "statistical", "r": 0.2, "depth": 2})]:
        syn = make_synthesizer(name, m=2, bins=BINS, **params)
        rel = syn.release(data, 1.0, np.random.default_rng(2))
        v = rel.sets.values
        assert v.shape == (2, 2, 300, 5) and rel.sets.schema is SCHEMA
        assert not np.any((v[..., 0] == 1) & (v[..., 1] == 0)), name  # voted ⇒ registered
        assert np.all((v[..., 4] >= -4) & (v[..., 4] <= 6))
        assert set(np.unique(v[..., 3])) <= {0.0, 1.0, 2.0}
        again = syn.release(data, 1.0, np.random.default_rng(2))
        np.testing.assert_array_equal(again.sets.values, v)  # reproducible under a seed


def test_levels_follow_the_order_and_uh_draws_a_new_order_per_set():
    steps = make_synthesizer("steps", m=4, bins=BINS, order=["college", "voted"])
    rel = steps.release(_data(), 1.0, np.random.default_rng(0))
    assert np.all(rel.diagnostics[FIRST_SPLIT] == SCHEMA.names.index("college"))
    uh = make_synthesizer("uh_mod", m=8, depth=1, bins=BINS)
    rel = uh.release(_data(r=3), 1.0, np.random.default_rng(0))
    assert len(np.unique(rel.diagnostics[FIRST_SPLIT])) > 1  # random per set and replicate
    per_rep = make_synthesizer("uh_mod", m=8, depth=1, bins=BINS, order_draw="per_replicate")
    first = per_rep.release(_data(r=3), 1.0, np.random.default_rng(0)).diagnostics[FIRST_SPLIT]
    assert np.all(first == first[:, :1]) and len(np.unique(first[:, 0])) > 1


def test_statistical_ranking_puts_the_lower_mean_aic_cluster_first():
    """At a large ε the exponential mechanism picks the best split almost surely; its cluster of
    lower mean AIC is layer 1 (spec §2.2(c))."""
    data = _data(r=1, n=2000)
    syn = make_synthesizer("steps", m=1, bins=BINS, ranking="statistical", r=0.5,
                           selection="grouped_split")
    rel = syn.release(data, 2000.0, np.random.default_rng(0))
    codes = syn.coding(data).encode(data.values)[0]
    aic = np.array([aic_univariate(np.bincount(codes[:, j], minlength=k).astype(float))
                    for j, k in enumerate((2, 2, 2, 3, 5))])
    splits = two_cluster_splits(5)
    best = splits[np.argmax(split_utility(aic, splits))]
    low = best if aic[best].mean() < aic[~best].mean() else ~best
    print("AIC per attribute", np.round(aic, 1), "layer 1:", np.flatnonzero(low))
    assert rel.diagnostics[FIRST_SPLIT][0, 0] == np.flatnonzero(low)[0]


@pytest.mark.parametrize("name, params, message", [
    ("steps", {"ranking": "entropy", "order": ["voted"]}, "ranking: 'entropy' is not allowed"),
    ("steps", {"order": ["voted", "college"], "depth": 3}, "depth: must lie in 1..2"),
    ("steps", {"order": ["voted"], "depth": 0}, "depth: must be an integer >= 1"),
    ("steps", {"ranking": "statistical", "r": 0.1, "depth": 3, "selection": "grouped_split"},
     "depth: selection=grouped_split splits the attributes into 2 clusters"),
    ("steps", {"ranking": "statistical", "r": 0.1}, "depth: selection=per_node needs"),
    ("steps", {"ranking": "statistical", "r": 0.1, "depth": 2, "leaf_level": "merged"},
     "leaf_level: selection=per_node ends every branch"),
    ("steps", {"ranking": "statistical", "r": 0.1, "selection": "greedy"},
     "selection: 'greedy' is not allowed"),
    ("steps", {"ranking": "statistical", "depth": 2}, "r: ranking=statistical spends"),
    ("steps", {}, "order: ranking=practical needs an order"),
    ("steps", {"order": ["voted", []]}, "order: ranking=practical needs an order"),
    ("steps", {"ranking": "statistical", "r": 0.1, "order": ["voted"]},
     "order: only used with ranking=practical"),
    ("steps", {"order": ["voted"], "r": 1.0}, "r: must be a number in [0, 1)"),
    ("steps", {"order": ["voted"], "leaf_level": "top"}, "leaf_level: 'top' is not allowed"),
    ("uh_mod", {"depth": 0}, "depth: must be an integer >= 1"),
    ("uh_mod", {"depth": 2, "consistency": "hay"}, "consistency: 'hay' is not allowed"),
    ("uh_mod", {"depth": 2, "order_draw": "once"}, "order_draw: 'once' is not allowed"),
    ("flat_laplace", {"sensitivity": 0}, "sensitivity: must be a number in (0, inf)"),
])
def test_bad_configuration_is_one_clear_line(name, params, message):
    with pytest.raises(ConfigError) as err:
        make_synthesizer(name, **params)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("name, params, message", [
    ("uh_mod", {"depth": 6}, "depth: must lie in 1..5"),
    ("steps", {"order": ["voted"], "consistency": "hay_padded"}, "consistency: hay_padded pads"),
    ("steps", {"ranking": "statistical", "r": 0.1, "depth": 6}, "depth: must lie in 1..5"),
    ("steps", {"order": ["voted", "turnout"]}, "order: 'turnout' is not allowed"),
    ("steps", {"order": ["voted", ["voted", "y"]]}, "order: column 'voted' appears twice"),
    ("flat_laplace", {"bins": {}}, "bins.y: numeric column needs a number of bins"),
    ("flat_laplace", {"bins": {"y": 5, "voted": 2}}, "bins.voted: column is categorical"),
])
def test_bad_values_against_the_schema_are_one_clear_line(name, params, message):
    params = {"bins": BINS, **params}
    syn = make_synthesizer(name, **params)
    with pytest.raises(ConfigError) as err:
        syn.release(_data(), 1.0, np.random.default_rng(0))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_per_node_election_picks_the_lowest_aic_attribute_of_every_node():
    """Algorithm 1 at a huge ε: the root splits on the attribute of lowest AIC, and each child
    elects the lowest-AIC attribute among those left, on its own records."""
    data = _data(r=1, n=3000, seed=4)
    syn = make_synthesizer("steps", m=1, bins=BINS, ranking="statistical", r=0.5, depth=2)
    codes = syn.coding(data).encode(data.values)[0]
    cards = (2, 2, 2, 3, 5)

    def lowest(rows, allowed):
        aic = [aic_univariate(np.bincount(rows[:, j], minlength=k).astype(float))
               if j in allowed else np.inf for j, k in enumerate(cards)]
        return int(np.argmin(aic))

    from harness.privacy import PrivacyLedger
    from harness.synthesizers.branch_tree import elect_branch_tree

    tree = elect_branch_tree(codes, cards, 2, 1e6, np.random.default_rng(0), PrivacyLedger(),
                             "set 1")
    root = lowest(codes, set(range(5)))
    assert tree.first_split == root
    for level in range(cards[root]):
        rows = codes[codes[:, root] == level]
        expect = lowest(rows, set(range(5)) - {root})  # child `level` is row `level` of layer 2
        assert np.flatnonzero(tree.strides[1][level])[0] == expect, level
    rel = syn.release(data, 1e6, np.random.default_rng(0))
    assert rel.diagnostics[FIRST_SPLIT][0, 0] == root


def test_substitution_neighbours_double_the_sensitivities_and_are_recorded():
    add_remove = make_synthesizer("steps", ranking="statistical", r=0.2, depth=1, bins=BINS)
    changed = make_synthesizer("steps", ranking="statistical", r=0.2, depth=1, bins=BINS,
                               neighbours="substitution")
    grouped = make_synthesizer("steps", ranking="statistical", r=0.2, bins=BINS,
                               selection="grouped_split", neighbours="substitution")
    assert (add_remove.delta_u, changed.delta_u, grouped.delta_u) == (2.0, 4.0, 8.0)
    rel = changed.release(_data(), 1.0, np.random.default_rng(0))
    assert rel.ledger.relations() == ("substitution",)
    counts = [e for e in rel.ledger.entries if e.mechanism == "laplace"]
    assert {e.sensitivity for e in counts} == {2.0} and not any(e.note for e in counts)
    with pytest.raises(ConfigError, match="neighbours: 'swap' is not allowed"):
        make_synthesizer("flat_laplace", neighbours="swap")
