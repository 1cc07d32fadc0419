"""A hierarchical (tree) histogram over categorical and binned attributes, with dense arrays per
tree level (spec 003 §2.3–§2.6, §9.2). It is the engine of STEPS, UH-mod and the flat Laplace
sanitizer (:mod:`harness.synthesizers.steps`).

Layout. The attributes are split into an ordered list of *levels* G_1, …, G_D (disjoint sets of
attribute indices covering all p attributes). A node at depth d is a cell of the cross-table of
G_1 ∪ … ∪ G_d; depth D is the full cross-table; the root (depth 0) holds all n records and its
count n is public. With the attributes listed in level order, the cross-table is row-major, so
the nodes of depth d are the contiguous blocks of the leaves and the children of node i at depth
d − 1 are nodes i·b_d … (i + 1)·b_d − 1 at depth d (b_d = Π of the level's cardinalities). Every
level is one dense array (R, N_d) with leading replicate axis R; aggregation, consistency and
sampling are reshapes and axis sums.

The passes below touch a tree only through its levels' sizes, ``valid()`` and three segment
operations between a level and the one above (``child_sums``, ``expand``, ``first_child``), so
they serve the dense :class:`TreeLayout` (one attribute set per level, every branch alike) and
the per-node trees of :mod:`harness.synthesizers.branch_tree` (branches split on different
attributes) alike.

Structural zeros (spec §2.3 [R]): leaves that cannot occur are removed from the tree, and so is
every node all of whose leaves are structural zeros. They are never noised and always count 0.

Pipeline of one release (spec §2.7): :meth:`TreeLayout.level_counts` → :func:`sanitize_levels`
(Laplace per level, budget split over levels by the caller) → :func:`consistent_counts` (the
least-squares projection onto consistent trees, spec §2.5) → :func:`sample_leaves`
(hierarchical top-down allocation with negative counts clipped to 0, spec §2.6) →
:meth:`AttributeCoding.decode` (numeric attributes uniform within their bins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..privacy import laplace_mechanism
from ..schema import Categorical, Schema

CONSISTENCY = ("gls", "hay_padded", "none")
SAMPLING = ("hierarchical", "flat")


# --- attributes: categorical codes and equal-width bins of numeric columns ---------------------
@dataclass(frozen=True)
class AttributeCoding:
    """Every column of ``schema`` as a categorical attribute: categorical columns by their level
    codes, numeric columns cut into ``bins[name]`` equal-width bins over their public bounds
    (spec §2.1 preprocessing, A5). ``decode`` draws numeric values uniform within their bins."""

    schema: Schema
    bins: tuple[int | None, ...]  # per column: None for categorical, else the number of bins

    @classmethod
    def of(cls, schema: Schema, bins, key: str = "bins") -> AttributeCoding:
        bins = dict(bins or {})
        unknown = sorted(set(bins) - set(schema.names))
        if unknown:
            raise ConfigError(f"{key}.{unknown[0]}: no such column (allowed: "
                              f"{', '.join(c.name for c in schema.columns)})")
        out = []
        for col in schema.columns:
            if isinstance(col, Categorical):
                if col.name in bins:
                    raise ConfigError(f"{key}.{col.name}: column is categorical; bins are for "
                                      f"numeric columns")
                out.append(None)
                continue
            k = bins.get(col.name)
            if not isinstance(k, int) or isinstance(k, bool) or k < 1:
                raise ConfigError(f"{key}.{col.name}: numeric column needs a number of bins "
                                  f"(an integer >= 1), got {k!r}")
            out.append(k)
        return cls(schema, tuple(out))

    @property
    def cards(self) -> tuple[int, ...]:
        """Number of levels (or bins) of every attribute, in schema order."""
        return tuple(len(c.levels) if k is None else k
                     for c, k in zip(self.schema.columns, self.bins, strict=True))

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Integer codes (..., n, p) of records ``values`` (..., n, p); numeric values outside
        their bounds fall in the end bins."""
        codes = np.empty(values.shape, dtype=np.int64)
        for j, (col, k) in enumerate(zip(self.schema.columns, self.bins, strict=True)):
            v = values[..., j]
            if k is None:
                codes[..., j] = v.astype(np.int64)
            else:
                b = np.floor((v - col.lower) / (col.upper - col.lower) * k)
                codes[..., j] = np.clip(b, 0, k - 1).astype(np.int64)
        return codes

    def decode(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Records (..., n, p): categorical codes as floats, numeric values uniform within their
        bin (spec §2.6)."""
        out = codes.astype(float)
        for j, (col, k) in enumerate(zip(self.schema.columns, self.bins, strict=True)):
            if k is not None:
                width = (col.upper - col.lower) / k
                out[..., j] = col.lower + (codes[..., j] + rng.random(codes.shape[:-1])) * width
        return out

    def structural_zeros(self) -> np.ndarray:
        """Boolean array over the full cross-table (``cards``, schema order): True where the
        cell is a structural zero of the schema (numeric bins never are)."""
        cat_mask = self.schema.structural_zero_mask()  # over the categorical columns
        shape = [c if k is None else 1 for c, k in zip(self.cards, self.bins, strict=True)]
        return np.broadcast_to(cat_mask.reshape(shape), self.cards)


# --- the tree ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class TreeLayout:
    """Levels G_1..G_D (tuples of attribute indices) over attributes of cardinalities ``cards``
    and the structural-zero mask over the full cross-table in attribute (schema) order."""

    cards: tuple[int, ...]
    levels: tuple[tuple[int, ...], ...]
    zeros: np.ndarray | None = None

    def __post_init__(self):
        flat = [a for g in self.levels for a in g]
        if sorted(flat) != list(range(len(self.cards))) or not all(self.levels):
            raise ValueError(f"levels {self.levels} must be non-empty disjoint sets covering "
                             f"attributes 0..{len(self.cards) - 1}")

    @property
    def order(self) -> tuple[int, ...]:
        """Attribute indices in level order (the axes of the row-major cross-table)."""
        return tuple(a for g in self.levels for a in g)

    @property
    def depth(self) -> int:
        return len(self.levels)

    @property
    def fanouts(self) -> tuple[int, ...]:
        """b_d, children per node of depth d − 1, for d = 1..D."""
        return tuple(int(np.prod([self.cards[a] for a in g])) for g in self.levels)

    @property
    def sizes(self) -> tuple[int, ...]:
        """N_d, nodes at depth d, for d = 1..D."""
        return tuple(int(n) for n in np.cumprod(self.fanouts))

    def valid(self) -> list[np.ndarray]:
        """Per depth d = 1..D, boolean (N_d,): the node is not a structural zero (at least one
        of its leaves can occur)."""
        if self.zeros is None:
            return [np.ones(n, dtype=bool) for n in self.sizes]
        out = [~np.transpose(self.zeros, self.order).reshape(-1)]
        for n, b in zip(self.sizes[-2::-1], self.fanouts[:0:-1], strict=True):
            out.append(out[-1].reshape(n, b).any(axis=-1))
        return out[::-1]

    def leaf_index(self, codes: np.ndarray) -> np.ndarray:
        """Row-major leaf index (..., n) of integer codes (..., n, p) (schema order)."""
        leaf = np.zeros(codes.shape[:-1], dtype=np.int64)
        for a in self.order:
            leaf = leaf * self.cards[a] + codes[..., a]
        return leaf

    def leaf_codes(self, leaf: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`leaf_index`: codes (..., n, p) in schema order."""
        codes = np.empty((*leaf.shape, len(self.cards)), dtype=np.int64)
        rest = leaf.copy()
        for a in self.order[::-1]:
            codes[..., a] = rest % self.cards[a]
            rest //= self.cards[a]
        return codes

    def aggregate(self, leaves: np.ndarray) -> list[np.ndarray]:
        """Node counts (..., N_d) of every depth d = 1..D from leaf counts (..., N_D)."""
        out = [leaves]
        for n, b in zip(self.sizes[-2::-1], self.fanouts[:0:-1], strict=True):
            out.append(out[-1].reshape(*leaves.shape[:-1], n, b).sum(axis=-1))
        return out[::-1]

    @property
    def first_split(self) -> int:
        """The (first) attribute of the root's split."""
        return self.levels[0][0]

    # segment operations between depth d − 1 and depth d (d = 0..D−1 indexes the child level)
    def child_sums(self, d: int, x: np.ndarray) -> np.ndarray:
        """Σ over the children of every node of the level above: (..., N_d) → (..., N_{d−1})."""
        return x.reshape(*x.shape[:-1], -1, self.fanouts[d]).sum(axis=-1)

    def expand(self, d: int, y: np.ndarray) -> np.ndarray:
        """Every child's parent value: (..., N_{d−1}) → (..., N_d)."""
        return np.repeat(y, self.fanouts[d], axis=-1)

    def first_child(self, d: int) -> np.ndarray:
        """Index of the first child (at level d) of every node of the level above."""
        parents = self.sizes[d - 1] if d else 1
        return np.arange(parents, dtype=np.int64) * self.fanouts[d]

    def level_counts(self, codes: np.ndarray) -> list[np.ndarray]:
        """True node counts (R, N_d), d = 1..D, of integer codes (R, n, p)."""
        r = codes.shape[0]
        n_leaves = self.sizes[-1]
        leaf = self.leaf_index(codes) + n_leaves * np.arange(r)[:, None]
        leaves = np.bincount(leaf.ravel(), minlength=r * n_leaves).reshape(r, n_leaves)
        return self.aggregate(leaves.astype(float))


# --- privacy: Laplace noise on every node -------------------------------------------------------
def sanitize_levels(counts: Sequence[np.ndarray], layout: TreeLayout, epsilons: Sequence[float],
                    rng: np.random.Generator, ledger, statistic: str,
                    sensitivity: float = 1.0, note: str = "") -> list[np.ndarray]:
    """n*[v] = n[v] + Lap(0, Δ/ε_d) on every node of depth d (spec §2.4). Each depth is one vector
    query over a partition of the records (parallel composition within the level: Δ = 1 for
    add/remove neighbours, 2 for a changed record), the levels compose sequentially.
    Structural-zero nodes are set to 0 (their noise is discarded, never released)."""
    out = []
    for d, (c, eps, ok) in enumerate(zip(counts, epsilons, layout.valid(), strict=True), 1):
        noisy = laplace_mechanism(c, sensitivity=sensitivity, epsilon=eps, rng=rng,
                                  ledger=ledger, statistic=f"{statistic}: level {d} node counts",
                                  note=note)
        out.append(np.where(ok, noisy, 0.0))
    return out


# --- consistency: least-squares projection onto consistent trees --------------------------------
def consistent_counts(noisy: Sequence[np.ndarray], layout: TreeLayout, variances: Sequence[float],
                      root: float | np.ndarray | None) -> list[np.ndarray]:
    """The generalised least-squares estimate of the node counts given noisy counts y_v with
    variances σ²_d per depth, subject to every parent equalling the sum of its children,
    structural-zero nodes being 0 and the root equalling ``root`` (public n, spec A16; None:
    the root is unknown and estimated too, Hay et al. 2010). Two passes (spec §2.5 [R]):

    * up: leaves z = y, V = σ²; internal z = (y/σ² + S/W)/(1/σ² + 1/W), V = 1/(1/σ² + 1/W)
      with S = Σ children z, W = Σ children V;
    * down: n̄_root = root (or z_root); n̄_u = z_u + (V_u / W_v)(n̄_v − S_v) for children u of v.

    For a uniform fan-out b and equal variances this is Hay et al.'s closed form (the paper's
    Eqns 2–3 as corrected in spec §2.5). Structural-zero nodes have z = V = 0 and stay 0."""
    valid = layout.valid()
    z, v = [None] * layout.depth, [None] * layout.depth
    z[-1] = np.where(valid[-1], noisy[-1], 0.0)
    v[-1] = np.where(valid[-1], variances[-1], 0.0) * np.ones_like(z[-1])
    sums, weights = [None] * layout.depth, [None] * layout.depth  # S, W of the parents (depth d−1)
    for d in range(layout.depth - 1, -1, -1):  # children at index d (depth d + 1)
        s, w = layout.child_sums(d, z[d]), layout.child_sums(d, v[d])
        sums[d], weights[d] = s, w
        if d == 0:
            break
        ok = valid[d - 1] & (w > 0)
        prec = np.where(ok, 1.0 / variances[d - 1] + 1.0 / np.where(ok, w, 1.0), 1.0)
        z[d - 1] = np.where(ok, (noisy[d - 1] / variances[d - 1] + s / np.where(ok, w, 1.0))
                            / prec, 0.0)
        v[d - 1] = np.where(ok, 1.0 / prec, 0.0)
    if root is None:  # the root is one more node with unknown count (no noisy value of its own)
        parent = sums[0]
    else:
        root = np.asarray(root, dtype=float)
        parent = np.broadcast_to(root[..., None] if root.ndim else root, sums[0].shape)
    out = []
    for d in range(layout.depth):
        w = weights[d]
        gap = np.where(w > 0, (parent - sums[d]) / np.where(w > 0, w, 1.0), 0.0)
        child = z[d] + v[d] * layout.expand(d, gap)
        out.append(child)
        parent = child
    return out


# --- synthesis: top-down allocation ---------------------------------------------------------------
def _child_choice(weights: np.ndarray, valid: np.ndarray, layout, d: int, parent: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
    """For every record (R, n) whose node at the level above is ``parent`` (R, n), the child (an
    index at level d) drawn with probability ∝ max(weight, 0) among its parent's children; a
    parent whose children all weigh 0 draws uniformly among its valid children. ``weights``
    (R, N_d)."""
    r, size = weights.shape
    w = np.where(valid, np.maximum(weights, 0.0), 0.0)
    w = np.where(layout.expand(d, layout.child_sums(d, w)) > 0, w, valid.astype(float))
    first = layout.first_child(d)
    n_parents = first.size
    last = np.append(first[1:], size) - 1  # last child of every parent
    cum = np.cumsum(w, axis=-1)
    before = cum[:, first] - w[:, first]  # mass before each parent's first child
    local = cum - layout.expand(d, before)
    end = local[:, last]
    local /= layout.expand(d, np.where(end > 0, end, 1.0))  # ends exactly at 1
    seg = np.arange(r)[:, None] * n_parents + layout.expand(d, np.arange(n_parents))
    shifted = (local + seg).ravel()
    rows = np.arange(r)[:, None] * n_parents + parent  # (R, n) global parent of each record
    pos = np.searchsorted(shifted, rows + rng.random(parent.shape), side="right")
    child = pos - np.arange(r)[:, None] * size
    lo, hi = first[parent], last[parent]
    child = np.clip(child, lo, hi)
    bad = np.take_along_axis(w, child, axis=-1) <= 0  # only a rounding slip at a segment's end
    if bad.any():
        positive = np.where(w > 0, np.arange(size), -1)
        last_positive = np.maximum.reduceat(positive, first, axis=-1)  # (R, P)
        child = np.where(bad, np.take_along_axis(last_positive, parent, axis=-1), child)
    return child


def sample_leaves(counts: Sequence[np.ndarray], layout, n: int,
                  rng: np.random.Generator, sampling: str = "hierarchical") -> np.ndarray:
    """Leaf index (R, n) of n synthetic records per replicate (spec §2.6).

    ``hierarchical``: the root's n records are allocated top-down, count[children(v)] ~
    Multinomial(count[v], w/Σw) with w = max(n̄[children(v)], 0) (uniform over valid children if
    Σw = 0); drawn as every record descending the tree independently, which is the same
    multinomial allocation. ``flat``: the leaves alone, clipped at 0 and normalised, n records
    iid (the perturbed-histogram practice). Structural zeros are never drawn."""
    valid = layout.valid()
    r = counts[0].shape[0]
    if sampling == "flat":
        flat = _FlatLeaves(counts[-1].shape[-1])
        return _child_choice(counts[-1], valid[-1], flat, 0, np.zeros((r, n), dtype=np.int64),
                             rng)
    node = np.zeros((r, n), dtype=np.int64)
    for d in range(layout.depth):
        node = _child_choice(counts[d], valid[d], layout, d, node, rng)
    return node


@dataclass(frozen=True)
class _FlatLeaves:
    """The leaves as the children of the root alone (``sampling: flat``)."""

    size: int

    def child_sums(self, d, x):
        return x.sum(axis=-1, keepdims=True)

    def expand(self, d, y):
        return np.repeat(y, self.size, axis=-1)

    def first_child(self, d):
        return np.zeros(1, dtype=np.int64)
