"""The tree-histogram engine of STEPS, UH-mod and the flat Laplace sanitizer (spec 003 §2.3–§2.6,
§9.2, §9.5): the consistency step is the least-squares projection onto consistent trees (against
a generic constrained solve, and Hay et al.'s closed form on uniform trees), the vectorised tree
equals a record-level loop over nodes fed the same noise, and sampling respects structural
zeros, negative counts and bin ranges. The last section checks the trees of STEPS's per-node
election (Algorithm 1), whose branches split on different attributes: they partition the full
cross-table, records map to leaves and back, and the same consistency step is still the
constrained least-squares projection on such unbalanced trees."""

import numpy as np
import pytest

from harness.data import RecordBatch
from harness.errors import ConfigError
from harness.privacy import PrivacyLedger
from harness.schema import Schema
from harness.synthesizers.branch_tree import elect_branch_tree
from harness.synthesizers.hay_padded import hay_padded_counts
from harness.synthesizers.tree_histogram import (
    AttributeCoding,
    TreeLayout,
    consistent_counts,
    sample_leaves,
    sanitize_levels,
)


def _random_layout(rng, with_zeros=True):
    cards = tuple(int(c) for c in rng.integers(1, 4, size=4))
    cards = tuple(max(c, 2) if i == 0 else c for i, c in enumerate(cards))
    order = rng.permutation(4)
    cut = sorted(rng.choice(np.arange(1, 4), size=2, replace=False))
    levels = tuple(tuple(int(a) for a in g) for g in np.split(order, cut))
    zeros = None
    if with_zeros:
        zeros = rng.random(cards) < 0.3
        zeros.flat[rng.integers(zeros.size)] = False  # at least one possible leaf
    return TreeLayout(cards, levels, zeros)


def _constrained_gls(noisy, layout, variances, root):
    """Generic solve: minimise Σ_v (x_v − y_v)²/σ²_v over all non-root nodes subject to x being
    the aggregation of leaf values, structural-zero leaves 0 and Σ leaves = root (KKT system)."""
    valid_leaf = layout.valid()[-1]
    free = np.flatnonzero(valid_leaf)
    rows, targets, weights = [], [], []
    eye = np.eye(layout.sizes[-1])[:, free]  # leaf values from the free leaves
    for d, (y, var, ok) in enumerate(zip(noisy, variances, layout.valid(), strict=True)):
        agg = layout.aggregate(eye.T)[d].T  # (N_d, free)
        rows.append(agg[ok])
        targets.append(y[ok])
        weights.append(np.full(ok.sum(), 1.0 / var))
    a, y, w = np.vstack(rows), np.concatenate(targets), np.concatenate(weights)
    k = free.size
    kkt = np.zeros((k + 1, k + 1))
    kkt[:k, :k] = a.T @ (w[:, None] * a)
    kkt[:k, k] = kkt[k, :k] = 1.0
    rhs = np.concatenate([a.T @ (w * y), [root]])
    leaves = np.zeros(layout.sizes[-1])
    leaves[free] = np.linalg.solve(kkt, rhs)[:k]
    return layout.aggregate(leaves[None])


@pytest.mark.parametrize("seed", range(6))
def test_gls_is_the_constrained_least_squares_projection(seed):
    rng = np.random.default_rng(seed)
    layout = _random_layout(rng)
    variances = rng.uniform(0.5, 8.0, size=layout.depth)  # per-level budgets may differ
    noisy = [np.where(ok, rng.normal(10, 5, size=n), 0.0)[None]
             for n, ok in zip(layout.sizes, layout.valid(), strict=True)]
    root = 50.0
    ours = consistent_counts(noisy, layout, variances, root)
    brute = _constrained_gls([y[0] for y in noisy], layout, variances, root)
    for d in range(layout.depth):
        np.testing.assert_allclose(ours[d], brute[d], atol=1e-8)
    assert np.isclose(ours[0].sum(), root)
    for d in range(1, layout.depth):  # parents equal the sums of their children
        np.testing.assert_allclose(layout.aggregate(ours[-1])[d - 1], ours[d - 1], atol=1e-8)
    for d, ok in enumerate(layout.valid()):
        assert np.all(ours[d][0][~ok] == 0)


def _hay(noisy, b, height):
    """Hay et al. (2010) closed form as corrected in spec 003 §2.5 (uniform fan-out b, equal
    variances, the root noisy); ``noisy`` per depth 0..L, node heights h = L − depth + 1."""
    depth = len(noisy) - 1
    z = [None] * (depth + 1)
    z[depth] = noisy[depth]
    for d in range(depth - 1, -1, -1):
        h = depth - d + 1
        kids = z[d + 1].reshape(-1, b).sum(axis=1)
        z[d] = ((b**h - b ** (h - 1)) / (b**h - 1) * noisy[d]
                + (b ** (h - 1) - 1) / (b**h - 1) * kids)
    nbar = [z[0]]
    for d in range(1, depth + 1):
        gap = nbar[d - 1] - z[d].reshape(-1, b).sum(axis=1)
        nbar.append(z[d] + np.repeat(gap, b) / b)
    return nbar


def test_gls_equals_hays_closed_form_on_a_uniform_tree():
    rng = np.random.default_rng(3)
    b, depth = 3, 3
    # a first attribute with one level plays Hay's noisy root; the harness's root is then unknown
    layout = TreeLayout((1, b, b, b), ((0,), (1,), (2,), (3,)))
    noisy = [rng.normal(20, 4, size=(1, n)) for n in layout.sizes]
    ours = consistent_counts(noisy, layout, [2.0] * layout.depth, root=None)
    hay = _hay([y[0] for y in noisy], b, depth)
    for d in range(layout.depth):
        np.testing.assert_allclose(ours[d][0], hay[d], atol=1e-9)
    # the printed Eqn (2) weights at h = 2 do not sum to 1; the corrected ones are b/(b+1), 1/(b+1)
    assert np.isclose((b**2 - b) / (b**2 - 1), b / (b + 1))


def test_consistency_lowers_the_error_of_every_level():
    """GLS is the best linear unbiased estimate under the constraints, so every level's mean
    squared error drops below that of its raw noisy counts, most near the root (spec §7.5)."""
    rng = np.random.default_rng(8)
    layout = TreeLayout((2, 3, 4), ((0,), (1,), (2,)))
    codes = np.stack([rng.integers(0, k, 200) for k in (2, 3, 4)], -1)[None]
    true = layout.level_counts(np.broadcast_to(codes, (4000, 200, 3)))
    noisy = sanitize_levels(true, layout, [0.2] * 3, rng, PrivacyLedger(), "set 1")
    fixed = consistent_counts(noisy, layout, [2 / 0.2**2] * 3, 200.0)
    raw = [((y - t) ** 2).mean() for y, t in zip(noisy, true, strict=True)]
    gls = [((y - t) ** 2).mean() for y, t in zip(fixed, true, strict=True)]
    print("MSE per level, noisy:", np.round(raw, 1), "consistent:", np.round(gls, 1))
    assert all(g < 0.9 * r for g, r in zip(gls, raw, strict=True))
    assert gls[0] / raw[0] < gls[-1] / raw[-1]


def test_hay_padded_equals_gls_without_phantoms_and_zeroes_them_with():
    rng = np.random.default_rng(4)
    uniform = TreeLayout((3, 3, 3), ((2,), (0,), (1,)))
    noisy = [rng.normal(10, 3, size=(2, n)) for n in uniform.sizes]
    gls = consistent_counts(noisy, uniform, [2.0] * 3, np.array([90.0, 80.0]))
    hay = hay_padded_counts(noisy, uniform, np.array([90.0, 80.0]))
    for d in range(3):
        np.testing.assert_allclose(hay[d], gls[d], atol=1e-9)
    zeros = np.zeros((2, 3), dtype=bool)
    zeros[1, 2] = True
    unequal = TreeLayout((2, 3), ((0,), (1,)), zeros)  # padded to b = 3: one phantom, one zero
    noisy = [rng.normal(10, 3, size=(1, n)) for n in unequal.sizes]
    out = hay_padded_counts(noisy, unequal, 40.0)
    assert out[1][0, 5] == 0 and out[0].shape == (1, 2) and out[1].shape == (1, 6)
    brute = consistent_counts(noisy, unequal, [2.0, 2.0], 40.0)
    assert not np.allclose(out[1], brute[1])  # the phantoms pull the real nodes (spec A6)
    with pytest.raises(ConfigError, match="consistency: hay_padded pads one attribute"):
        hay_padded_counts(noisy, TreeLayout((2, 3), ((0, 1),)), 40.0)


def _loop_oracle(codes, layout, noise, variance, n):
    """Record-level loop: count every node by walking each record down its branch, add the
    given noise, then the two GLS passes node by node (spec §2.5 pseudocode)."""
    counts = {}
    for rec in codes:
        key = ()
        for g in layout.levels:
            key = key + tuple(int(rec[a]) for a in g)
            counts[key] = counts.get(key, 0) + 1
    valid = layout.valid()

    def node_keys(d):  # all nodes of depth d (1-based) in row-major order
        cards = [layout.cards[a] for g in layout.levels[:d] for a in g]
        return list(np.ndindex(*cards))

    y = {}
    for d in range(1, layout.depth + 1):
        for i, key in enumerate(node_keys(d)):
            y[key] = (counts.get(key, 0) + noise[d - 1][i]) if valid[d - 1][i] else None
    widths = [len(g) for g in layout.levels]

    def children(key, d):
        return [k for k in node_keys(d + 1) if k[: len(key)] == key]

    z, v, s, w = {}, {}, {}, {}

    def up(key, d):
        if d == layout.depth:
            z[key], v[key] = (0.0, 0.0) if y[key] is None else (y[key], variance)
            return
        for c in children(key, d):
            up(c, d + 1)
        s[key] = sum(z[c] for c in children(key, d))
        w[key] = sum(v[c] for c in children(key, d))
        if d == 0:
            return
        if y[key] is None:
            z[key], v[key] = 0.0, 0.0
        else:
            p = 1 / variance + 1 / w[key]
            z[key], v[key] = (y[key] / variance + s[key] / w[key]) / p, 1 / p

    up((), 0)
    nbar = {(): float(n)}

    def down(key, d):
        for c in children(key, d):
            nbar[c] = z[c] + (v[c] / w[key] * (nbar[key] - s[key]) if w[key] > 0 else 0.0)
            if d + 1 < layout.depth:
                down(c, d + 1)

    down((), 0)
    assert sum(widths) == len(layout.cards)
    return [np.array([nbar[k] for k in node_keys(d)]) for d in range(1, layout.depth + 1)]


def test_vectorised_tree_equals_record_level_loop_with_the_same_noise():
    rng = np.random.default_rng(11)
    layout = TreeLayout((2, 3, 2, 2), ((1,), (0, 3), (2,)),
                        zeros=np.zeros((2, 3, 2, 2), dtype=bool))
    layout.zeros[1, :, 0, :] = True  # e.g. "voted and not registered"
    possible = np.argwhere(~layout.zeros)
    codes = possible[rng.integers(len(possible), size=(2, 60))]  # R = 2 replicates
    ledger = PrivacyLedger()
    true = layout.level_counts(codes)
    noisy = sanitize_levels(true, layout, [0.7] * 3, rng, ledger, "set 1")
    variance = 2 / 0.7**2
    ours = consistent_counts(noisy, layout, [variance] * 3, 60.0)
    for k in range(2):
        noise = [noisy[d][k] - true[d][k] for d in range(3)]
        oracle = _loop_oracle(codes[k], layout, noise, variance, 60)
        for d in range(3):
            np.testing.assert_allclose(ours[d][k], oracle[d], atol=1e-9)
    assert [e.epsilon for e in ledger.entries] == [0.7] * 3


def test_sampling_respects_structural_zeros_negative_counts_and_the_tree():
    rng = np.random.default_rng(5)
    zeros = np.zeros((2, 2, 3), dtype=bool)
    zeros[1, 0, :] = True
    layout = TreeLayout((2, 2, 3), ((0,), (1,), (2,)), zeros)
    leaves = np.array([[5.0, -3.0, 10.0, 4.0, 0.0, 6.0, 0, 0, 0, 8.0, 2.0, -1.0]])
    counts = layout.aggregate(leaves)
    counts[0] = np.array([[40.0, 60.0]])  # an inconsistent upper level drives the allocation
    n = 200_000
    for sampling in ("hierarchical", "flat"):
        leaf = sample_leaves(counts, layout, n, rng, sampling)
        freq = np.bincount(leaf[0], minlength=12) / n
        assert freq[6:9].sum() == 0  # structural zeros
        assert freq[1] == 0 and freq[11] == 0  # negative counts clipped to 0
        assert freq[4] == 0  # zero count
        if sampling == "hierarchical":  # P(leaf) = Π of the clipped conditional shares
            # depth 1: 40/60 (given); depth 2 given x0 = 0: 12/22, 10/22; given x0 = 1: only
            # x1 = 1 (the other child is a structural zero); leaves: clipped shares
            expect = np.zeros(12)
            expect[[0, 2]] = 0.4 * 12 / 22 * np.array([5, 10]) / 15
            expect[[3, 5]] = 0.4 * 10 / 22 * np.array([4, 6]) / 10
            expect[[9, 10]] = 0.6 * np.array([8, 2]) / 10
        else:
            w = np.maximum(leaves[0], 0) * ~zeros.ravel()
            expect = w / w.sum()
        se = np.sqrt(expect * (1 - expect) / n)
        assert np.all(np.abs(freq - expect) <= 5 * se + 1e-12), (sampling, freq, expect)


def test_numeric_attributes_drawn_uniform_within_their_bins():
    schema = Schema.from_config({"columns": [{"name": "g", "levels": ["a", "b"]},
                                             {"name": "y", "bounds": [-2.0, 3.0]}]})
    coding = AttributeCoding.of(schema, {"y": 5})
    assert coding.cards == (2, 5)
    rng = np.random.default_rng(0)
    codes = np.stack([rng.integers(0, 2, 4000), rng.integers(0, 5, 4000)], -1)[None]
    values = coding.decode(codes, rng)
    np.testing.assert_array_equal(coding.encode(values), codes)  # each value in its own bin
    lo = -2.0 + codes[0, :, 1]
    assert np.all((values[0, :, 1] >= lo) & (values[0, :, 1] < lo + 1.0))
    frac = values[0, :, 1] - lo  # uniform within the bin
    assert abs(frac.mean() - 0.5) < 4 * np.sqrt(1 / 12 / 4000)
    assert isinstance(RecordBatch(values, schema=schema), RecordBatch)


# --- trees of the per-node election -----------------------------------------------------------
CARDS = (2, 3, 2, 4)


def _tree(seed, layers=2, zeros=None, n=80):
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, k, n) for k in CARDS], -1)
    codes[:, 2] = np.where(rng.random(n) < 0.1, 1, 0)  # an unbalanced attribute
    ledger = PrivacyLedger()
    # a small ε per layer: the branches elect different attributes
    tree = elect_branch_tree(codes, CARDS, layers, 0.05, rng, ledger, "set 1", zeros)
    return tree, codes, ledger


@pytest.mark.parametrize("layers", [1, 2, 3, 4])
def test_tree_partitions_the_table_and_records_map_to_leaves_and_back(layers):
    tree, codes, ledger = _tree(1, layers)
    assert tree.sizes[-1] == np.prod(CARDS)  # every branch ends in its remaining cross-table
    assert tree.depth == (layers if layers == len(CARDS) else layers + 1)
    assert [e.epsilon for e in ledger.entries] == [0.05] * layers  # one spend per layer
    leaves = tree.leaf_codes(np.arange(tree.sizes[-1]))
    assert len({tuple(c) for c in leaves}) == tree.sizes[-1]  # a bijection with the table
    nodes = tree.node_index(codes)
    np.testing.assert_array_equal(tree.leaf_codes(nodes[-1]), codes)
    counts = tree.level_counts(codes[None])
    agg = tree.aggregate(counts[-1])
    for d in range(tree.depth):
        np.testing.assert_array_equal(agg[d], counts[d])
        for node in np.unique(nodes[d]):  # a node's records agree on its branch's attributes
            rows = codes[nodes[d] == node]
            split = _branch_attributes(tree, int(node), d, layers)
            assert all(len(np.unique(rows[:, a])) == 1 for a in split)


def _branch_attributes(tree, node, d, layers):
    """The attributes that the partition layers on the way to ``node`` (level d) split on."""
    out = []
    for e in range(d, -1, -1):
        parent = tree.parents(e)[node]
        if e < layers:
            out.extend(np.flatnonzero(tree.strides[e][parent]).tolist())
        node = parent
    return out


def test_branches_may_split_on_different_attributes():
    tree, _, _ = _tree(2, layers=2)
    second = {int(np.flatnonzero(row)[0]) for row in tree.strides[1]}
    assert len(second) > 1


@pytest.mark.parametrize("seed", range(4))
def test_gls_on_unbalanced_branch_trees_is_the_least_squares_projection(seed):
    zeros = np.zeros(CARDS, dtype=bool)
    zeros[1, 0, :, :] = True
    tree, codes, _ = _tree(seed, layers=2, zeros=zeros)
    rng = np.random.default_rng(seed)
    variances = rng.uniform(0.5, 8.0, size=tree.depth)
    noisy = [np.where(ok, rng.normal(3, 2, size=n), 0.0)[None]
             for n, ok in zip(tree.sizes, tree.valid(), strict=True)]
    ours = consistent_counts(noisy, tree, variances, 80.0)
    brute = _constrained_gls([y[0] for y in noisy], tree, variances, 80.0)
    for d in range(tree.depth):
        np.testing.assert_allclose(ours[d], brute[d], atol=1e-8)
    leaves = tree.leaf_codes(np.arange(tree.sizes[-1]))
    assert np.all(ours[-1][0][zeros[tuple(leaves.T)]] == 0)
    leaf = sample_leaves(ours, tree, 5000, rng)
    assert not zeros[tuple(tree.leaf_codes(leaf[0]).T)].any()
