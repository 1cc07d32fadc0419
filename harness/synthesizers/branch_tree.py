"""Trees whose branches split on different attributes: STEPS's per-node statistical election
(Algorithm 1; spec 003 §2.2(b), §2.3, §2.7 ``em_per_node``).

Every node v of layer l = 0..L−1 elects, among the attributes A_v not yet used on its branch,
the one of lowest univariate AIC on its own records, by the exponential mechanism of Eqn (5):
P(j) ∝ exp(−AIC_j · ε_l / (2δ_u)), δ_u = 2, ε_l = r·ε_set/L. The nodes of a layer hold disjoint
records, so one layer costs ε_l (parallel composition) and the L layers r·ε_set. Its children
are the levels of the elected attribute; below layer L each branch ends in the cross-table of its
remaining attributes (the extra leaf level of spec A1 (A)).

:class:`BranchTree` stores such a tree level by level: for every node of the level above, the
index of its first child and the strides that turn a record's codes into its child's offset
(one attribute with stride 1 in a partition layer; row-major strides of the remaining attributes
in the leaf level). It offers the same segment operations as the dense
:class:`~harness.synthesizers.tree_histogram.TreeLayout`, so sanitizing, consistency and sampling
are the engine's. The tree is data-dependent, so it is built per replicate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..privacy import exponential_mechanism
from .importance import aic_univariate


@dataclass(frozen=True)
class BranchTree:
    """Levels d = 0..D−1 (children of the level above): ``first[d]`` (N_{d−1},) first child of
    every parent, ``strides[d]`` (N_{d−1}, p) offsets of a record's codes within its parent's
    children, ``sizes[d]`` = N_d; ``zeros`` the structural-zero mask over the full cross-table
    (schema order) or None."""

    cards: tuple[int, ...]
    first: tuple[np.ndarray, ...]
    strides: tuple[np.ndarray, ...]
    sizes: tuple[int, ...]
    zeros: np.ndarray | None = None
    _valid: list = field(default_factory=list, compare=False, repr=False)
    _parents: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def depth(self) -> int:
        return len(self.first)

    @property
    def first_split(self) -> int:
        return int(np.flatnonzero(self.strides[0][0])[0])

    def parents(self, d: int) -> np.ndarray:
        """The parent (index at the level above) of every node of level d."""
        if d not in self._parents:
            counts = np.diff(np.append(self.first[d], self.sizes[d]))
            self._parents[d] = np.repeat(np.arange(self.first[d].size), counts)
        return self._parents[d]

    def first_child(self, d: int) -> np.ndarray:
        return self.first[d]

    def child_sums(self, d: int, x: np.ndarray) -> np.ndarray:
        return np.add.reduceat(x, self.first[d], axis=-1)

    def expand(self, d: int, y: np.ndarray) -> np.ndarray:
        return y[..., self.parents(d)]

    def aggregate(self, leaves: np.ndarray) -> list[np.ndarray]:
        out = [leaves]
        for d in range(self.depth - 1, 0, -1):
            out.append(self.child_sums(d, out[-1]))
        return out[::-1]

    def node_index(self, codes: np.ndarray) -> list[np.ndarray]:
        """The node (..., n) of every record at every depth, from codes (..., n, p)."""
        node = np.zeros(codes.shape[:-1], dtype=np.int64)
        out = []
        for first, strides in zip(self.first, self.strides, strict=True):
            node = first[node] + (codes * strides[node]).sum(axis=-1)
            out.append(node)
        return out

    def level_counts(self, codes: np.ndarray) -> list[np.ndarray]:
        r = codes.shape[0]
        out = []
        for size, node in zip(self.sizes, self.node_index(codes), strict=True):
            idx = node + size * np.arange(r)[:, None]
            out.append(np.bincount(idx.ravel(), minlength=r * size).reshape(r, size)
                       .astype(float))
        return out

    def _attribute_codes(self, leaf: np.ndarray):
        """Yield (attribute, its codes (...)) of leaves ``leaf``, one attribute at a time (each
        level's offset decoded by its parent's strides)."""
        path = [leaf]
        for d in range(self.depth - 1, 0, -1):
            path.append(self.parents(d)[path[-1]])
        path = path[::-1]  # node of every depth, root's children first
        codes = [np.zeros(leaf.shape, dtype=np.int64) for _ in self.cards]
        for d, node in enumerate(path):
            parent = self.parents(d)[node]
            local = node - self.first[d][parent]
            for a, k in enumerate(self.cards):
                column = self.strides[d][:, a]
                if not column.any():
                    continue
                stride = column[parent]
                codes[a] += np.where(stride > 0, (local // np.maximum(stride, 1)) % k, 0)
        yield from enumerate(codes)

    def leaf_codes(self, leaf: np.ndarray) -> np.ndarray:
        """Codes (..., p) of leaves ``leaf`` (...)."""
        out = np.empty((*leaf.shape, len(self.cards)), dtype=np.int64)
        for a, c in self._attribute_codes(leaf):
            out[..., a] = c
        return out

    def valid(self) -> list[np.ndarray]:
        """Per level, the nodes that are not structural zeros. The last level's children of a
        parent are the row-major cross-table of all its unassigned attributes (in ascending
        order), so their mask is the structural-zero table sliced at the parent's branch."""
        if not self._valid:
            leaves = np.ones(self.sizes[-1], dtype=bool)
            if self.zeros is not None:
                assigned = self._assignments()
                blocks = [~self.zeros[tuple(slice(None) if c < 0 else c for c in row)].reshape(-1)
                          for row in assigned]
                leaves = np.concatenate(blocks)
            out = [leaves]
            for d in range(self.depth - 1, 0, -1):
                out.append(np.logical_or.reduceat(out[-1], self.first[d]))
            self._valid.extend(out[::-1])
        return self._valid

    def _assignments(self) -> np.ndarray:
        """Codes (N_{D−1}, p) fixed on the branch of every parent of the last level (−1: free)."""
        assigned = np.full((1, len(self.cards)), -1, dtype=np.int64)
        for d in range(self.depth - 1):
            parent = self.parents(d)
            local = np.arange(self.sizes[d]) - self.first[d][parent]
            child = assigned[parent]
            attribute = np.argmax(self.strides[d][parent] > 0, axis=1)  # one per partition layer
            child[np.arange(child.shape[0]), attribute] = local
            assigned = child
        return assigned


def elect_branch_tree(codes: np.ndarray, cards: tuple[int, ...], layers: int, epsilon: float,
                      rng: np.random.Generator, ledger, statistic: str,
                      zeros: np.ndarray | None = None, delta_u: float = 2.0) -> BranchTree:
    """STEPS's tree on one data set ``codes`` (n, p) (Algorithm 1): ``layers`` layers of per-node
    elections by the exponential mechanism on −AIC (budget ``epsilon`` per layer, one ledger
    entry per layer), then the leaf level of each branch's remaining attributes."""
    n, p = codes.shape
    node = np.zeros(n, dtype=np.int64)
    available = np.ones((1, p), dtype=bool)
    firsts, strides = [], []
    for layer in range(layers):
        n_nodes = available.shape[0]
        scores = np.full((n_nodes, p), -np.inf)
        for j, k in enumerate(cards):
            counts = np.bincount(node * k + codes[:, j], minlength=n_nodes * k)
            aic = aic_univariate(counts.reshape(n_nodes, k).astype(float))
            scores[:, j] = np.where(available[:, j], -aic, -np.inf)
        chosen = exponential_mechanism(
            scores, sensitivity=delta_u, epsilon=epsilon, rng=rng, ledger=ledger,
            statistic=f"{statistic}: layer {layer + 1} attribute of every node by AIC "
                      f"(nodes hold disjoint records: parallel)")
        width = np.asarray(cards)[chosen]
        first = np.concatenate([[0], np.cumsum(width)[:-1]])
        stride = np.zeros((n_nodes, p), dtype=np.int64)
        stride[np.arange(n_nodes), chosen] = 1
        firsts.append(first)
        strides.append(stride)
        node = first[node] + codes[np.arange(n), chosen[node]]
        available = np.repeat(available, width, axis=0)
        available[np.arange(available.shape[0]), np.repeat(chosen, width)] = False
    if available.any():  # the leaf level: the cross-table of each branch's remaining attributes
        n_nodes = available.shape[0]
        stride = np.zeros((n_nodes, p), dtype=np.int64)
        size = np.ones(n_nodes, dtype=np.int64)
        for a in range(p - 1, -1, -1):
            stride[:, a] = np.where(available[:, a], size, 0)
            size = np.where(available[:, a], size * cards[a], size)
        firsts.append(np.concatenate([[0], np.cumsum(size)[:-1]]))
        strides.append(stride)
    sizes = [int(f[-1] + _children(s, cards, f.size - 1)) for f, s in zip(firsts, strides,
                                                                          strict=True)]
    return BranchTree(tuple(cards), tuple(firsts), tuple(strides), tuple(sizes), zeros)


def _children(strides: np.ndarray, cards, row: int) -> int:
    """Number of children of parent ``row``: the product of the cardinalities it splits on."""
    return int(np.prod([c for c, s in zip(cards, strides[row], strict=True) if s > 0]))
