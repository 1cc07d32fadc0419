"""The large-domain path of MST and AIM (:mod:`.pgm`): the estimate and sample steps on a
junction tree over the measured cliques, for schemas whose full cross-table exceeds the dense
path's limit (:data:`.pgm_model.JOINT_LIMIT` cells).

Estimate (McKenna, Sheldon & Miklau 2019, ICML, Alg. 1; the representation of McKenna,
Miklau & Sheldon 2021 §4 and McKenna et al. 2022 §4): each replicate's model is a graphical
model whose potentials live on the maximal measured cliques only, fitted by mbi's mirror
descent (marginals by message passing on the junction tree, Armijo steps) with the same l2
loss, total estimate and stopping rule as the dense path (:class:`.pgm_model.Estimation`).
The measured cliques differ between replicates (MST's tree, AIM's rounds), so the replicates
are fitted one after another, not vmapped; JAX compiles the initialisation and the 50-step
block once per clique structure (a new tree or a new AIM round is a new structure, so on this
path compilation is a large share of a release's time).

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
from .pgm_model import BLOCK, UNMEASURED, iterate


@dataclass(frozen=True)
class Measurement:
    """One noisy marginal: ``clique`` (sorted columns), noisy counts ``y`` with noise SD
    ``sd`` per cell times ``scale`` (None: 1), as the loss ½‖(μ_c − y)/(sd·scale)‖²."""

    clique: tuple[int, ...]
    y: np.ndarray
    sd: float
    scale: np.ndarray | None = None


def _measurements(slots, values, sigmas, scales, i) -> tuple[list[Measurement], float]:
    """Replicate i's measured slots and its estimated total: the inverse-variance weighted
    mean of the measurements' sums (the dense path's total)."""
    out, sums, weights = [], [], []
    for k, clique in enumerate(slots):
        sd = float(sigmas[i, k])
        if sd >= UNMEASURED:
            continue
        y = np.asarray(values[k][i], dtype=float)
        scale = None if scales is None or k not in scales else np.asarray(scales[k][i], float)
        out.append(Measurement(tuple(clique), y, max(sd, 1e-12), scale))
        sums.append(y.sum())
        weights.append(1.0 / (sd ** 2 * (y.size if scale is None else (scale ** 2).sum())))
    return out, max(1.0, float(np.dot(weights, sums) / np.sum(weights)))


def logsumexp(x: np.ndarray, axis=None) -> np.ndarray:
    """log Σ exp over ``axis`` (all axes when None), stabilised by the maximum (the
    potentials are finite)."""
    top = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out.reshape([n for i, n in enumerate(x.shape)
                        if axis is not None and i not in axis]) if axis is not None \
        else out.reshape(())


def _aligned(values: np.ndarray, attrs: tuple[int, ...], target: tuple[int, ...]):
    """``values`` over ``attrs`` broadcast to the axes of ``target`` (a superset; both in
    column order)."""
    return values.reshape([values.shape[attrs.index(a)] if a in attrs else 1 for a in target])


def _sum_to(values: np.ndarray, attrs: tuple[int, ...], target: tuple[int, ...]):
    """``values`` over ``attrs`` summed down to the columns ``target`` (a subset)."""
    axes = tuple(i for i, a in enumerate(attrs) if a not in target)
    return values.sum(axis=axes) if axes else values


def maximal(cliques) -> list[tuple[int, ...]]:
    """The cliques not contained in another, once each, in first-seen order."""
    out: list[tuple[int, ...]] = []
    for c in cliques:
        if c not in out and not any(set(c) < set(o) for o in cliques):
            out.append(c)
    return out


_TREES: dict = {}


@dataclass(frozen=True)
class JunctionTree:
    """mbi's junction tree (``junction_tree.make_junction_tree``) of ``cliques`` over columns
    of ``cards``: its cliques (column tuples) in depth-first order, each clique's ``parent``
    (−1 for the first clique of each connected part), and for every model clique the tree
    clique holding it (``home``). Built once per worker and structure."""

    cards: tuple[int, ...]
    nodes: tuple[tuple[int, ...], ...]
    parent: tuple[int, ...]
    home: dict

    @classmethod
    def of(cls, cards, cliques) -> JunctionTree:
        key = (tuple(int(c) for c in cards), tuple(cliques))
        if key not in _TREES:
            import networkx as nx
            from mbi import junction_tree

            from .pgm_model import column_names, mbi_domain

            names = column_names(len(cards))
            graph, _ = junction_tree.make_junction_tree(
                mbi_domain(cards), [tuple(names[a] for a in c) for c in cliques])
            order = list(nx.dfs_preorder_nodes(graph))
            pred = nx.dfs_predecessors(graph)
            nodes = tuple(tuple(sorted(names.index(a) for a in c)) for c in order)
            parent = tuple(order.index(pred[c]) if c in pred else -1 for c in order)
            home = {c: next(k for k, n in enumerate(nodes) if set(c) <= set(n))
                    for c in cliques}
            _TREES[key] = cls(key[0], nodes, parent, home)
        return _TREES[key]

    def calibrate(self, potentials: dict, total: float) -> list[np.ndarray]:
        """Counts over every tree clique (each connected part summing to ``total``) of the
        model with log-potentials ``potentials`` (model clique → array): sum-product in log
        space, collect from the leaves, then distribute from the roots."""
        logpot = [np.zeros([self.cards[a] for a in n]) for n in self.nodes]
        for c, theta in potentials.items():
            k = self.home[c]
            logpot[k] = logpot[k] + _aligned(theta, c, self.nodes[k])
        inbox: list[list] = [[] for _ in self.nodes]  # (source, separator, log message)

        def send(k, to):
            sep = tuple(a for a in self.nodes[k] if a in self.nodes[to])
            belief = logpot[k] + sum((_aligned(m, s, self.nodes[k]) for src, s, m in inbox[k]
                                      if src != to), np.zeros(()))
            axes = tuple(i for i, a in enumerate(self.nodes[k]) if a not in sep)
            inbox[to].append((k, sep, logsumexp(belief, axis=axes) if axes else belief))

        for k in reversed(range(len(self.nodes))):
            if self.parent[k] >= 0:
                send(k, self.parent[k])
        for k in range(len(self.nodes)):
            if self.parent[k] >= 0:
                send(self.parent[k], k)
        tables = []
        for k, n in enumerate(self.nodes):
            belief = logpot[k] + sum((_aligned(m, s, n) for _, s, m in inbox[k]),
                                     np.zeros(()))
            tables.append(total * np.exp(belief - logsumexp(belief)))
        return tables


@dataclass(frozen=True)
class TreeModel:
    """One replicate's fitted model: log-potentials on the measured maximal cliques
    (``potentials``: clique → array), the estimated total and the column ``cards``."""

    potentials: dict
    total: float
    cards: tuple[int, ...]


def mirror_descent(cards, measured: list[Measurement], total: float, settings,
                   warm: dict | None = None) -> tuple[TreeModel, int]:
    """McKenna, Sheldon & Miklau 2019, Alg. 1, as mbi's ``MirrorDescent`` (Armijo steps: the
    step α grows by 1.01 on sufficient decrease ``loss − loss′ ≥ ½α⟨∇L, μ − μ′⟩`` and halves
    otherwise; α₀ = 2/(L·total) with mbi's Lipschitz bound L = max_C Σ_{c→C} ‖Q‖²|C|/(|c|σ²)),
    in numpy on the junction tree of the measured maximal cliques, in blocks of 50 steps
    under the dense path's convergence rule. ``warm``: a previous model's potentials (each
    added into a clique that holds it)."""
    cliques = maximal([m.clique for m in measured])
    tree = JunctionTree.of(cards, cliques)
    route = [next(c for c in cliques if set(m.clique) <= set(c)) for m in measured]
    blocks: dict = {}
    for m, c in zip(measured, route, strict=True):
        norm = 1.0 if m.scale is None else float(np.max(m.scale ** -2.0))
        ratio = np.prod([cards[a] for a in c]) / np.prod([cards[a] for a in m.clique])
        blocks[c] = blocks.get(c, 0.0) + norm * ratio / m.sd ** 2
    theta = {c: np.zeros([cards[a] for a in c]) for c in cliques}
    for old, values in (warm or {}).items():
        c = next(c for c in cliques if set(old) <= set(c))
        theta[c] = theta[c] + _aligned(values, old, c)

    def marginals(th):
        tables = tree.calibrate(th, total)
        return {c: _sum_to(tables[tree.home[c]], tree.nodes[tree.home[c]], c)
                for c in cliques}

    def loss_and_gradient(mu):
        loss, grad = 0.0, {c: np.zeros_like(mu[c]) for c in cliques}
        for m, c in zip(measured, route, strict=True):
            weight = 1.0 if m.scale is None else 1.0 / m.scale
            diff = (_sum_to(mu[c], c, m.clique).ravel() - m.y) * weight / m.sd
            loss += 0.5 * float(diff @ diff)
            g = (diff * weight / m.sd).reshape([cards[a] for a in m.clique])
            grad[c] = grad[c] + _aligned(g, m.clique, c)
        return loss, grad

    mu = marginals(theta)
    loss, grad = loss_and_gradient(mu)
    state = _State(theta, mu, loss, grad, 2.0 / (max(blocks.values()) * total))

    def block(st: _State) -> _State:
        th, mu, loss, grad, alpha = st.theta, st.mu, st.loss, st.grad, st.alpha
        for _ in range(BLOCK):
            th2 = {c: th[c] - alpha * grad[c] for c in cliques}
            mu2 = marginals(th2)
            loss2, grad2 = loss_and_gradient(mu2)
            gain = sum(float((grad[c] * (mu[c] - mu2[c])).sum()) for c in cliques)
            if loss - loss2 >= 0.5 * alpha * gain:
                th, mu, loss, grad, alpha = th2, mu2, loss2, grad2, 1.01 * alpha
            else:
                alpha = 0.5 * alpha
        return _State(th, mu, loss, grad, alpha)

    state, steps = iterate(block, state, settings,
                           lambda st: [st.mu[c].reshape(1, -1) / total for c in cliques])
    return TreeModel(state.theta, total, tuple(int(c) for c in cards)), steps


@dataclass(frozen=True)
class _State:
    theta: dict
    mu: dict
    loss: float
    grad: dict
    alpha: float


@dataclass
class TreeFit:
    """Fitted models of R replicates, one :class:`TreeModel` each (potentials on the
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
        """Per replicate, the log-potentials (warm start of the next fit)."""
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
    :func:`.pgm_model.fit_joint`) by :func:`mirror_descent`; ``warm``: per replicate, a
    previous fit's potentials; ``scales``: slot → (R, C) per-cell noise-SD multipliers."""
    models, steps = [], 0
    for i in range(sigmas.shape[0]):
        measured, total = _measurements(slots, values, sigmas, scales, i)
        model, taken = mirror_descent(cards, measured, total, settings,
                                      None if warm is None else warm[i])
        models.append(model)
        steps = max(steps, taken)
    return TreeFit(models, tuple(int(c) for c in cards), steps)


@dataclass
class CalibratedTree:
    """A model's junction tree (:class:`JunctionTree`) with its calibrated clique marginals
    (``tables``: counts over each tree clique, each connected part summing to ``total``)."""

    tree: JunctionTree
    tables: list[np.ndarray]
    total: float

    @classmethod
    def of(cls, model: TreeModel) -> CalibratedTree:
        tree = JunctionTree.of(model.cards, list(model.potentials))
        return cls(tree, tree.calibrate(model.potentials, model.total), model.total)

    @property
    def cliques(self):
        return self.tree.nodes

    @property
    def parent(self):
        return self.tree.parent

    @property
    def cards(self):
        return self.tree.cards

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
