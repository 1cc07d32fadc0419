"""AIM's model-size filter, fast (McKenna et al. 2022, "AIM", PVLDB 15(11), §4, Alg. 2: a
round's candidates are those c with JT-SIZE(cliques ∪ {c}) ≤ (ρ_used/ρ)·MAX-SIZE).

JT-SIZE is mbi's ``junction_tree.hypothetical_model_size``: the cells (× 8 bytes, in MB) of
the maximal cliques of the model graph (an edge between two columns of a common clique)
triangulated along an elimination order, which is mbi's ``greedy_order`` (repeatedly
eliminate the first remaining column, in column order, whose union of the current cliques
holding it has the fewest cells; a column in no clique costs 1), or, when the graph over all
columns is a tree, a depth-first post-order (no fill-in: the maximal cliques are the edges).
Calling it once per candidate and round rebuilds networkx graphs and junction trees: on
a 13-column schema (377 candidates) about 3 s a round, ~10 min for AIM's 208.

:func:`candidate_sizes_mb` computes the same numbers for all of a round's candidates at once
with bitmasks, vectorised over the candidates: the greedy order on closed neighbourhoods
(eliminating v merges the cliques holding v into their union less v, i.e. joins v's
neighbours, so the union of the cliques holding a column is its closed neighbourhood in the
elimination graph), and the maximal cliques of the triangulated graph as the maximal sets
among {v} ∪ (v's neighbours when eliminated) (a perfect elimination order's cliques).
Costs are exact integers (a domain whose size does not fit int64, or of more than
:data:`MAX_COLUMNS` columns, falls back to mbi's function), ties go to the first column as in
mbi, so a candidate passes the filter here exactly when it passes it through mbi (tested
against mbi on random schemas and clique sets).
"""

from __future__ import annotations

import functools
import math

import numpy as np

#: the bitmask tables hold 2^d entries
MAX_COLUMNS = 20


@functools.lru_cache(maxsize=8)
def _cells_of_masks(cards: tuple[int, ...]) -> np.ndarray:
    """Cells of every column subset (index: bitmask over the columns), int64."""
    cells = np.ones(1, dtype=np.int64)
    for card in cards:
        cells = np.concatenate([cells, cells * int(card)])
    return cells


def _mask(clique) -> int:
    return sum(1 << int(a) for a in set(clique))


def candidate_sizes_mb(cards, cliques, candidates) -> list[float]:
    """For every candidate c, mbi's ``hypothetical_model_size`` of ``[*cliques, c]`` in MB
    (see the module docstring)."""
    cards = tuple(int(c) for c in cards)
    candidates = [tuple(c) for c in candidates]
    d = len(cards)
    if not candidates:
        return []
    if d > MAX_COLUMNS or math.prod(cards) >= 2 ** 62 // 8:
        from .pgm_model import model_size_mb

        return [model_size_mb(cards, [*cliques, c]) for c in candidates]
    cells = _cells_of_masks(cards)
    base = [_mask(c) for c in cliques]
    masks = np.array([[_mask(c)] for c in candidates], dtype=np.int64)[:, 0]
    k = len(candidates)
    bit = np.int64(1) << np.arange(d, dtype=np.int64)
    # closed neighbourhoods in the model graph and whether a column is in some clique
    adj = np.tile(bit, (k, 1))
    held = np.zeros((k, d), dtype=bool)
    for a in range(d):
        for m in base:
            if m >> a & 1:
                adj[:, a] |= m
                held[:, a] = True
        has = (masks >> a & 1).astype(bool)
        adj[:, a] |= np.where(has, masks, 0)
        held[:, a] |= has
    total = _tree_cells(adj, cards)
    greedy = total < 0
    if greedy.any():
        total[greedy] = _greedy_cells(adj[greedy], held[greedy], bit, cells)
    return [int(t) * 8 / 2 ** 20 for t in total]


def _tree_cells(adj: np.ndarray, cards: tuple[int, ...]) -> np.ndarray:
    """Cells of the edges where the graph (closed neighbourhoods ``adj``) over all columns is
    a tree (connected, d − 1 edges), −1 elsewhere."""
    k, d = adj.shape
    degree = np.bitwise_count(adj).astype(np.int64).sum(axis=1) - d
    reach = np.ones(k, dtype=np.int64)
    for _ in range(d):
        for a in range(d):
            reach |= np.where(reach >> a & 1 == 1, adj[:, a], 0)
    tree = (degree == 2 * (d - 1)) & (reach == (1 << d) - 1) & (d > 1)
    out = np.full(k, -1, dtype=np.int64)
    if tree.any():
        edges = np.zeros(k, dtype=np.int64)
        for a in range(d):
            for b in range(a + 1, d):
                edges += np.where(adj[:, a] >> b & 1 == 1, cards[a] * cards[b], 0)
        out[tree] = edges[tree]
    return out


def _greedy_cells(adj, held, bit, cells) -> np.ndarray:
    """Cells of the maximal cliques of the graph triangulated along mbi's greedy order."""
    k, d = adj.shape
    adj = adj.copy()
    rows = np.arange(k)
    alive = np.full(k, (1 << d) - 1, dtype=np.int64)
    open_ = np.ones((k, d), dtype=bool)
    big = np.iinfo(np.int64).max
    found = np.empty((k, d), dtype=np.int64)
    for step in range(d):
        current = adj & alive[:, None]
        cost = np.where(open_, np.where(held, cells[current], 1), big)
        v = np.argmin(cost, axis=1)  # the first of the cheapest, as mbi's min over its order
        clique = current[rows, v]
        found[:, step] = clique
        others = clique & ~bit[v]
        for u in range(d):
            adj[:, u] |= np.where(others >> u & 1 == 1, others, 0)
        alive &= ~bit[v]
        open_[rows, v] = False
    inside = (found[:, :, None] & ~found[:, None, :]) == 0  # found[i] ⊆ found[j]
    inside[:, np.arange(d), np.arange(d)] = False
    top = ~inside.any(axis=2)
    return np.where(top, cells[found], 0).sum(axis=1)
