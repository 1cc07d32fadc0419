"""The large-domain path of MST and AIM (:mod:`.pgm`): the estimate and sample steps on a
junction tree over the measured cliques, for schemas whose full cross-table exceeds the dense
path's limit (:data:`.pgm_model.JOINT_LIMIT` cells).

Estimate (McKenna, Sheldon & Miklau 2019, ICML, Alg. 1; the representation of McKenna,
Miklau & Sheldon 2021 §4 and McKenna et al. 2022 §4): each replicate's model is an mbi
``MarkovRandomField`` whose potentials live on the maximal measured cliques only, fitted by
mbi's mirror descent (marginals by message passing on the junction tree) with the same l2
loss, total estimate and convergence rule as the dense path (:class:`.pgm_model.Estimation`).
The measured cliques differ between replicates (MST's tree, AIM's rounds), so the replicates
are fitted one after another, not vmapped; JAX compiles once per clique structure.

Marginals and sampling read the fitted potentials through :class:`CalibratedTree`, in numpy
(nothing to compile): mbi's junction tree of the model's cliques, calibrated by sum-product
in log space. A marginal inside one clique is a sum; a marginal across cliques (MST's and
AIM's selection scores) is Π μ_C / Π μ_S over the subtree joining its columns, exact on a
calibrated tree.

Sample: ancestral sampling on the junction tree with the harness's rng only (never mbi's
sampler, which draws from numpy's global state): the first clique of each connected part is
drawn from its marginal, every other clique's new columns from its marginal conditioned on
its separator with its parent (cliques in depth-first order), one uniform per record and
clique (:func:`harness.histograms.draw_from_rows`). Records so drawn are i.i.d. from the
model.

Per-cell noise scales (``scales``) serve MST's domain compression (:mod:`.pgm_compress`): a
merged cell measured as the sum of k noisy cells has SD σ√k; its loss weight is 1/(σ²k),
as in the reference implementation's weighted query.

Everything runs in float64 (``jax.enable_x64``); the same inputs give the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..histograms import draw_from_rows
from .pgm_model import BLOCK, UNMEASURED, column_names, mbi_domain


def _measurements(domain, slots, values, sigmas, scales, i):
    """Replicate i's measured slots as mbi LinearMeasurements, and its estimated total (the
    inverse-variance weighted mean of the measurements' sums, as the dense path)."""
    import jax.numpy as jnp
    from mbi import LinearMeasurement
    from mbi.marginal_loss import WeightedQuery

    names = column_names(len(domain.shape))
    out, sums, weights = [], [], []
    for k, clique in enumerate(slots):
        sd = float(sigmas[i, k])
        if sd >= UNMEASURED:
            continue
        y = np.asarray(values[k][i], dtype=float)
        scale = None if scales is None or k not in scales else np.asarray(scales[k][i])
        attrs = tuple(names[a] for a in clique)
        if scale is None:
            out.append(LinearMeasurement(jnp.asarray(y), attrs, stddev=sd))
            variance = sd ** 2 * y.size
        else:
            w = 1.0 / scale
            out.append(LinearMeasurement(jnp.asarray(y * w), attrs, stddev=sd,
                                         query=WeightedQuery(w)))
            variance = sd ** 2 * float((scale ** 2).sum())
        sums.append(y.sum())
        weights.append(1.0 / variance)
    total = max(1.0, float(np.dot(weights, sums) / np.sum(weights)))
    return out, total


@dataclass
class TreeFit:
    """Fitted models of R replicates, one mbi ``MarkovRandomField`` each (potentials on the
    measured maximal cliques, total = the estimated number of records), over columns of
    ``cards``; ``decoders`` (optional, per replicate) map sampled codes back to the original
    levels (MST's domain compression; the models are then on each replicate's compressed
    domain)."""

    models: list
    cards: tuple[int, ...]
    steps: int = 0
    decoders: list | None = None
    _trees: dict = field(default_factory=dict, repr=False)

    @property
    def potentials(self) -> list:
        """Per replicate, the potentials (warm start of the next fit)."""
        return [m.potentials for m in self.models]

    def tree(self, i: int) -> CalibratedTree:
        if i not in self._trees:
            self._trees[i] = CalibratedTree.of(self.models[i])
        return self._trees[i]

    def marginal(self, clique: tuple[int, ...]) -> np.ndarray:
        """Counts (R, C) of each model's marginal over ``clique`` (sorted column indices),
        cells in row-major order (as :meth:`.pgm_model.JointFit.marginal`)."""
        return np.stack([self.tree(i).marginal(clique).ravel()
                         for i in range(len(self.models))])

    def sample(self, n: int, rng: np.random.Generator, draws: int = 1) -> np.ndarray:
        """``draws`` sets of n records (R, draws, n, d), i.i.d. from each replicate's model."""
        out = []
        for i in range(len(self.models)):
            codes = self.tree(i).sample(draws * n, rng)
            if self.decoders is not None:
                codes = self.decoders[i](codes, rng)
            out.append(codes.reshape(draws, n, -1))
        return np.stack(out)


def fit_tree(cards, slots, values, sigmas, settings, warm=None, scales=None) -> TreeFit:
    """Fit R models to noisy marginals, one replicate at a time, each on the slots it
    measured (``sigmas[i, k] < UNMEASURED``; the arguments are those of
    :func:`.pgm_model.fit_joint`); ``warm``: per replicate, a previous fit's potentials;
    ``scales``: slot → (R, C) per-cell noise-SD multipliers."""
    import jax
    from mbi.estimation import MirrorDescent

    domain = mbi_domain(cards)
    models, steps = [], 0
    est = MirrorDescent()
    with jax.enable_x64(True):
        for i in range(sigmas.shape[0]):
            measured, total = _measurements(domain, slots, values, sigmas, scales, i)
            counter = _Counter()
            model = est.estimate(domain, measured, total, iters=settings.max_iters,
                                 warm_start=None if warm is None else warm[i],
                                 tol=settings.tol, patience=settings.patience,
                                 callback_fn=counter)
            models.append(model)
            steps = max(steps, counter.blocks * BLOCK)
    return TreeFit(models, tuple(int(c) for c in cards), steps)


class _Counter:
    """Counts mbi's callback blocks (the steps taken)."""

    def __init__(self):
        self.blocks = 0

    def __call__(self, _):
        self.blocks += 1


def _aligned(values: np.ndarray, attrs: tuple[int, ...], target: tuple[int, ...]):
    """``values`` over ``attrs`` broadcast to the axes of ``target`` (a superset; both in
    column order)."""
    return values.reshape([values.shape[attrs.index(a)] if a in attrs else 1 for a in target])


@dataclass
class CalibratedTree:
    """A model's junction tree with its calibrated clique marginals, computed in numpy (no
    compilation): ``cliques`` (column-index tuples, in an order where every clique's parent
    comes first), ``parent`` (index of the parent clique, −1 for the first clique of each
    connected part), ``tables`` (counts over each clique, summing to ``total``) and the
    column ``cards``. Sum-product in log space: collect from the leaves, distribute from the
    roots; each connected part normalised to the model's total."""

    cliques: list[tuple[int, ...]]
    parent: list[int]
    tables: list[np.ndarray]
    cards: tuple[int, ...]
    total: float

    @classmethod
    def of(cls, model) -> CalibratedTree:
        import networkx as nx
        from mbi import junction_tree
        from scipy.special import logsumexp

        names = list(model.domain.attributes)
        cards = tuple(int(c) for c in model.domain.shape)
        jtree, _ = junction_tree.make_junction_tree(model.domain, list(model.cliques))
        order = list(nx.dfs_preorder_nodes(jtree))
        pred = nx.dfs_predecessors(jtree)
        cliques = [tuple(sorted(names.index(a) for a in c)) for c in order]
        parent = [order.index(pred[c]) if c in pred else -1 for c in order]
        logpot = [np.zeros([cards[a] for a in c]) for c in cliques]
        for factor in model.potentials.tables.values():
            attrs = tuple(names.index(a) for a in factor.domain.attributes)
            home = next(k for k, c in enumerate(cliques) if set(attrs) <= set(c))
            inner = tuple(sorted(attrs))
            values = np.transpose(np.asarray(factor.values, dtype=float),
                                  [attrs.index(a) for a in inner])
            logpot[home] = logpot[home] + _aligned(values, inner, cliques[home])

        def message(k, into, exclude):
            """Clique k's message to its neighbour on the separator ``into``."""
            belief = logpot[k] + sum((_aligned(m, sep, cliques[k])
                                      for (src, dst), (sep, m) in msgs.items()
                                      if dst == k and src != exclude), np.zeros(()))
            axes = tuple(i for i, a in enumerate(cliques[k]) if a not in into)
            return logsumexp(belief, axis=axes) if axes else belief

        msgs: dict = {}
        for k in reversed(range(len(cliques))):  # collect: children before parents
            if parent[k] >= 0:
                sep = tuple(a for a in cliques[k] if a in cliques[parent[k]])
                msgs[(k, parent[k])] = (sep, message(k, sep, parent[k]))
        for k in range(len(cliques)):  # distribute: parents before children
            if parent[k] >= 0:
                sep = tuple(a for a in cliques[k] if a in cliques[parent[k]])
                msgs[(parent[k], k)] = (sep, message(parent[k], sep, k))
        total = float(model.total)
        tables = []
        for k in range(len(cliques)):
            belief = logpot[k] + sum((_aligned(m, sep, cliques[k])
                                      for (src, dst), (sep, m) in msgs.items() if dst == k),
                                     np.zeros(()))
            tables.append(total * np.exp(belief - logsumexp(belief)))
        return cls(cliques, parent, tables, cards, total)

    def _steiner(self, columns) -> list[int]:
        """The cliques of a subtree holding every column of ``columns``: each chosen
        clique's path to its root, less the chain above the first clique where the paths
        meet (parts of the forest stay separate)."""
        chosen = {next(k for k, c in enumerate(self.cliques) if a in c) for a in columns}
        keep = set()
        for k in chosen:
            while k >= 0:
                keep.add(k)
                k = self.parent[k]
        pruned = True
        while pruned:
            pruned = False
            for top in [k for k in keep if self.parent[k] not in keep]:
                below = [k for k in keep if self.parent[k] == top]
                if top not in chosen and len(below) == 1:
                    keep.remove(top)
                    pruned = True
        return sorted(keep)

    def marginal(self, columns: tuple[int, ...]) -> np.ndarray:
        """Counts over ``columns`` (sorted column indices; axes in that order): inside one
        clique by summing, otherwise Π μ_C / Π μ_S over the subtree joining them (exact on a
        calibrated tree; parts of the forest are joined by an empty separator, μ_∅ = total)."""
        for k, c in enumerate(self.cliques):
            if set(columns) <= set(c):
                axes = tuple(i for i, a in enumerate(c) if a not in columns)
                return self.tables[k].sum(axis=axes)
        keep = self._steiner(columns)
        operands, scale = [], 1.0
        for k in keep:
            operands += [self.tables[k], list(self.cliques[k])]
            p = self.parent[k]
            if p in keep:
                sep = tuple(a for a in self.cliques[k] if a in self.cliques[p])
                if sep:
                    mu = self.marginal(sep)
                    inv = np.divide(1.0, mu, out=np.zeros_like(mu), where=mu > 0)
                    operands += [inv, list(sep)]
                else:
                    scale /= self.total
            elif k != keep[0]:
                scale /= self.total  # a second part of the forest
        return scale * np.einsum(*operands, list(columns), optimize="greedy")

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n records (n, d) drawn i.i.d. from the model by ancestral sampling (see the module
        docstring); uniforms from ``rng`` only; codes of the model's domain."""
        codes = np.zeros((n, len(self.cards)), dtype=np.int64)
        done: set[int] = set()
        for clique, table in zip(self.cliques, self.tables, strict=True):
            given = [a for a in clique if a in done]
            new = [a for a in clique if a not in done]
            if not new:
                continue
            order = [clique.index(a) for a in given + new]
            width = int(np.prod([self.cards[a] for a in new]))
            probs = np.maximum(np.transpose(table, order).reshape(-1, width), 0.0)
            probs[probs.sum(axis=1) <= 0] = 1.0  # a separator cell of no mass: uniform
            if given:
                rows = np.ravel_multi_index(tuple(codes[:, given].T),
                                            tuple(self.cards[a] for a in given))
            else:
                rows = np.zeros(n, dtype=np.int64)
            cells = draw_from_rows(probs, rows, rng)
            codes[:, new] = np.stack(np.unravel_index(
                cells, tuple(self.cards[a] for a in new)), axis=-1)
            done.update(new)
        return codes
