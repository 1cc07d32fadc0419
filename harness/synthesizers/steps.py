"""STEPS (statistical election to partition sequentially), UH-mod and the flat Laplace sanitizer
on one tree-histogram engine (Bowen, Liu & Su; spec 003 §2, §3.1, §3.3; the engine is
:mod:`harness.synthesizers.tree_histogram`).

The three differ only in how the levels G_1..G_D of the tree are chosen for each synthetic set:

* ``steps``: by importance (spec §2.2). ``ranking: practical`` takes a given ``order`` (names or
  lists of names, each a partition layer) and costs no budget (r = 0). ``ranking: statistical``
  spends r·ε_set on the exponential mechanism over AIC scores (:mod:`.importance`), either
  per node (``selection: per_node``, Algorithm 1: every node of layers 1..L elects its own
  attribute, δ_u = 2, r·ε_set/L per layer, branches may differ; :mod:`.branch_tree`) or once
  (``selection: grouped_split``, spec §2.2(c), the paper's simulation: the variant of §2.2.3
  after Eqn (5), "the l_1 difference between the two clusters on the average importance
  measures ... as the utility function for the exponential mechanism ... the group with the
  higher average importance measure will be put in layer 1", "what is used in the simulation
  studies": one draw over the 2^(p−1) − 1 two-cluster splits with u = |mean AIC(C1) − mean
  AIC(C2)|, at the whole selection share r·ε_set (the tree's only selection), δ_u = 4 (the paper
  gives none: each cluster mean moves by at most Lemma 1's 2, spec A10); the cluster of lower
  mean AIC, i.e. higher importance, is layer 1).
* ``uh_mod``: one attribute per layer drawn uniformly at random, a fresh permutation for every
  synthetic set and replicate (spec §3.1, A14; ``order_draw: per_replicate``: one permutation
  per replicate shared by its m sets); data-independent, so r = 0.
* ``flat_laplace``: one level, the full cross-table (D = 1, spec §3.3).

Layers. ``depth`` L partition layers come first; the attributes not in them form one extra leaf
level (``leaf_level: extra``, default A of spec A1, D = L + 1) or join layer L (``merged``,
option B, D = L). Budget per set (spec §2.4): ε_set = ε/m; r·ε_set for the selection,
(1 − r)·ε_set/D for the node counts of each level (sequential over levels, parallel within).
With a given order and r > 0 (the simulation's ``fixed_paper`` mode, spec A3) the selection
budget is reserved but not spent, and the release claims (1 − r)·ε, which is what it spends.

AIC and its sensitivity: :mod:`harness.synthesizers.importance`.

Neighbours (spec §1 [R]). The paper's sensitivities are for add/remove neighbours (Δ = 1 per
level, δ_u = 2 per AIC) while n is public: the root is not noised and every set has n records.
Strictly, releasing n records reveals n, so that guarantee holds given a public n (the ledger
says so; the end-to-end audit on add/remove neighbours detects n, see
tests/harness/privacy/test_steps_privacy.py). ``neighbours: substitution`` (one record changed,
n public by construction) doubles the defaults: Δ = 2 per level, δ_u = 4 (per node) or 8
(grouped split), and its release passes that audit. ``study.relation`` (``calibrate``) sets the
same after construction: every default sensitivity is known under both relations
(:class:`harness.privacy.Sensitivity`); a ``sensitivity`` or ``delta_u`` given under
substitution has no add/remove form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..privacy import PrivacyLedger, Sensitivity, exponential_mechanism
from ..privacy.ledger import ADD_REMOVE, RELATIONS
from ..validation import check_number
from .base import SetwiseSynthesizer
from .branch_tree import elect_branch_tree
from .hay_padded import hay_padded_counts
from .importance import aic_univariate, marginal_counts, split_utility, two_cluster_splits
from .registry import register
from .tree_histogram import (
    CONSISTENCY,
    SAMPLING,
    AttributeCoding,
    TreeLayout,
    consistent_counts,
    sample_leaves,
    sanitize_levels,
)

RANKINGS = ("practical", "statistical")
#: statistical ranking: every node elects its attribute (Algorithm 1) or one two-cluster split
SELECTIONS = ("per_node", "grouped_split")
#: default score sensitivity δ_u: Lemma 1 for one AIC; spec A10 for the cluster-mean difference
SELECTION_DELTA_U = {"per_node": 2.0, "grouped_split": 4.0}
LEAF_LEVELS = ("extra", "merged")
#: UH-mod's random order: a fresh draw for every synthetic set (spec A14) or one per replicate
ORDER_DRAWS = ("per_set", "per_replicate")

#: what the add/remove guarantee of the node counts rests on (spec §1, A16; the audit shows it)
PUBLIC_N_NOTE = ("n treated as public: the root count is not noised and every set has n "
                 "records; without a public n use neighbours=substitution (Δ = 2)")

#: diagnostics of every set: the number of sanitized levels D and the schema index of the first
#: attribute of level 1 (the root split)
LEVELS = "levels"
FIRST_SPLIT = "first_split_attribute"


class _TreeSynthesizer(SetwiseSynthesizer):
    """Shared release of the tree-histogram synthesizers: per set, choose the levels
    (``_structures``), count, sanitize, make consistent, sample and decode the records."""

    input_kind = "coded"  # a RecordBatch (R, n, p) of codes and numeric values with a schema

    def __init__(self, m: int, bins, structural_zeros: bool, consistency: str, sampling: str,
                 sensitivity: float | None, neighbours: str = ADD_REMOVE):
        super().__init__(m)
        if neighbours not in RELATIONS:
            raise allowed("neighbours", neighbours, RELATIONS)
        self.neighbour_relation = neighbours
        if consistency not in CONSISTENCY:
            raise allowed("consistency", consistency, CONSISTENCY)
        if sampling not in SAMPLING:
            raise allowed("sampling", sampling, SAMPLING)
        if bins is not None and not isinstance(bins, Mapping):
            raise ConfigError(f"bins: give a mapping of numeric column to number of bins, got "
                              f"{bins!r}")
        self.bins = None if bins is None else dict(bins)
        self.structural_zeros = bool(structural_zeros)
        self.consistency, self.sampling = consistency, sampling
        # a record moves one node per level, or two (changed record); a given value refers to
        # ``neighbours`` (Sensitivity.declared)
        self.level_sensitivity = Sensitivity.counts() if sensitivity is None else \
            Sensitivity.declared(float(check_number("sensitivity", sensitivity,
                                                    open_interval=(0, np.inf))), neighbours)

    @property
    def sensitivity(self) -> float:
        """The l1 sensitivity of one level's node counts under the release's relation."""
        return self.level_sensitivity.under(self.neighbour_relation)

    def sensitivities(self) -> list[Sensitivity]:
        return [self.level_sensitivity]

    #: share of each set's budget spent on choosing the levels
    selection_share: float = 0.0
    #: share of each set's budget left unspent (reserved for a selection that is not run)
    reserved_share: float = 0.0

    def claimed_epsilon(self, privacy, data=None) -> float:
        return float(privacy) * (1.0 - self.reserved_share)

    def coding(self, data) -> AttributeCoding:
        if not isinstance(data, RecordBatch) or data.schema is None or data.values.ndim != 3:
            raise ConfigError(f"data: {self.name} synthesizes records with a schema (a "
                              f"RecordBatch (R, n, p) of codes and numeric values)")
        return AttributeCoding.of(data.schema, self.bins)

    def _structures(self, codes, coding, zeros, eps_set, ledger, rng, j):
        """[(replicate indices, tree layout)] for set ``j``: replicates sharing one tree."""
        raise NotImplementedError

    @staticmethod
    def _group_levels(per_replicate: list[tuple], cards, zeros) -> list[tuple]:
        """Dense layouts, one per distinct list of levels, with the replicates that use it."""
        groups: dict = {}
        for k, levels in enumerate(per_replicate):
            groups.setdefault(levels, []).append(k)
        return [(np.asarray(idx), TreeLayout(cards, levels, zeros))
                for levels, idx in groups.items()]

    def _layers(self, layers: list[tuple[int, ...]], p: int, leaf_level: str) -> tuple:
        """Levels from partition ``layers`` plus the remaining attributes (spec A1)."""
        used = {a for g in layers for a in g}
        rest = tuple(a for a in range(p) if a not in used)
        if not rest:
            return tuple(layers)
        if leaf_level == "merged":
            return (*layers[:-1], tuple(sorted(layers[-1] + rest)))
        return (*layers, rest)

    def release_tree(self, codes: np.ndarray, layout: TreeLayout, eps_counts: float, n: int,
                     ledger, rng, statistic: str) -> np.ndarray:
        """Leaf indices (R, n) of one synthetic set from the tree ``layout`` (spec §2.7)."""
        eps_level = eps_counts / layout.depth
        noisy = sanitize_levels(layout.level_counts(codes), layout, [eps_level] * layout.depth,
                                rng, ledger, statistic, self.sensitivity,
                                note=PUBLIC_N_NOTE if self.neighbour_relation == ADD_REMOVE else "")
        if self.consistency == "gls":
            variance = 2.0 * (self.sensitivity / eps_level) ** 2
            noisy = consistent_counts(noisy, layout, [variance] * layout.depth, float(n))
        elif self.consistency == "hay_padded":
            noisy = hay_padded_counts(noisy, layout, float(n))
        return sample_leaves(noisy, layout, n, rng, self.sampling)

    def _one_set(self, data, eps_set, ledger, rng, j):
        coding = self.coding(data)
        codes = coding.encode(data.values)
        zeros = coding.structural_zeros() if self.structural_zeros else None
        groups = self._structures(codes, coding, zeros, eps_set, ledger, rng, j)
        eps_counts = eps_set * (1.0 - self.selection_share - self.reserved_share)
        out = np.empty(codes.shape)
        levels = np.empty(codes.shape[0])
        first = np.empty(codes.shape[0])
        owns = []
        for idx, layout in groups:
            owns.append(PrivacyLedger(relation=ledger.relation))
            leaf = self.release_tree(codes[idx], layout, eps_counts, data.n, owns[-1], rng,
                                     f"set {j + 1}")
            out[idx] = coding.decode(layout.leaf_codes(leaf), rng)
            levels[idx], first[idx] = layout.depth, layout.first_split
        record_once(ledger, owns)
        sets = RecordBatch(out, None, 1, data.columns, None, None, data.schema)
        return sets, {LEVELS: levels, FIRST_SPLIT: first}


def record_once(ledger, owns: list[PrivacyLedger]) -> None:
    """Record the spends of the first of several ledgers of one release: the same mechanisms run
    on different replicates (independent data sets), so they are one spend, not several; every
    ledger must compose to the same total."""
    spent = owns[0].total_epsilon()
    if any(not np.isclose(o.total_epsilon(), spent, rtol=1e-12, atol=0) for o in owns):
        raise AssertionError("replicates of one set spent different budgets")
    for entry in owns[0].entries:
        ledger.record(entry)


def _is_list(value) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _check_leaf_level(leaf_level: str) -> str:
    if leaf_level not in LEAF_LEVELS:
        raise allowed("leaf_level", leaf_level, LEAF_LEVELS)
    return leaf_level


@register
class FlatLaplace(_TreeSynthesizer):
    """The flat Laplace sanitizer (spec §3.3): Lap(Δ/ε_set) on every cell of the full
    cross-table (structural zeros excluded), clipped at 0, n records drawn from it (D = 1)."""

    name = "flat_laplace"

    def __init__(self, m: int = 5, bins=None, structural_zeros: bool = True,
                 neighbours: str = ADD_REMOVE, sensitivity: float | None = None):
        super().__init__(m, bins, structural_zeros, "none", "hierarchical", sensitivity,
                         neighbours)

    def _structures(self, codes, coding, zeros, eps_set, ledger, rng, j):
        everything = (tuple(range(codes.shape[-1])),)
        return self._group_levels([everything] * codes.shape[0], coding.cards, zeros)


@register
class UniversalHistogramMod(_TreeSynthesizer):
    """UH-mod (spec §3.1): ``depth`` layers of one attribute each, drawn uniformly at random for
    every synthetic set (and replicate), then the leaf level of the remaining attributes."""

    name = "uh_mod"

    def __init__(self, depth: int, m: int = 5, bins=None, leaf_level: str = "extra",
                 order_draw: str = "per_set", structural_zeros: bool = True,
                 consistency: str = "gls", sampling: str = "hierarchical",
                 neighbours: str = ADD_REMOVE, sensitivity: float | None = None):
        super().__init__(m, bins, structural_zeros, consistency, sampling, sensitivity,
                         neighbours)
        self.depth = int(check_number("depth", depth, integer=True, minimum=1))
        self.leaf_level = _check_leaf_level(leaf_level)
        if order_draw not in ORDER_DRAWS:
            raise allowed("order_draw", order_draw, ORDER_DRAWS)
        self.order_draw = order_draw

    def _permutations(self, r: int, p: int, rng) -> list[np.ndarray]:
        if self.depth > p:
            raise ConfigError(f"depth: must lie in 1..{p} (the number of attributes), got "
                              f"{self.depth}")
        return [rng.permutation(p)[: self.depth] for _ in range(r)]

    def _release(self, data, epsilon, ledger, rng):
        if self.order_draw == "per_set":
            return super()._release(data, epsilon, ledger, rng)
        r, _, p = self.coding(data).encode(data.values).shape
        self._drawn = self._permutations(r, p, rng)  # one order per replicate, every set
        try:
            return super()._release(data, epsilon, ledger, rng)
        finally:
            del self._drawn

    def _structures(self, codes, coding, zeros, eps_set, ledger, rng, j):
        r, _, p = codes.shape
        perms = self._drawn if self.order_draw == "per_replicate" else \
            self._permutations(r, p, rng)
        per_rep = [self._layers([(int(a),) for a in perm], p, self.leaf_level) for perm in perms]
        return self._group_levels(per_rep, coding.cards, zeros)


@register
class Steps(_TreeSynthesizer):
    """STEPS (spec §2): levels by practical importance (a given ``order``) or by statistical
    importance, either per node (Algorithm 1: every node of layers 1..L elects its attribute by
    the exponential mechanism on −AIC, δ_u = 2, r·ε_set/L per layer) or as the two-cluster split
    of the attributes whose mean AIC differs most (``selection: grouped_split``, the paper's
    simulation; δ_u = 4, r·ε_set)."""

    name = "steps"

    def __init__(self, ranking: str = "practical", order=None, depth: int | None = None,
                 r: float = 0.0, selection: str = "per_node", delta_u: float | None = None,
                 m: int = 5, bins=None, leaf_level: str = "extra", structural_zeros: bool = True,
                 consistency: str = "gls", sampling: str = "hierarchical",
                 neighbours: str = ADD_REMOVE, sensitivity: float | None = None):
        super().__init__(m, bins, structural_zeros, consistency, sampling, sensitivity,
                         neighbours)
        if ranking not in RANKINGS:
            raise allowed("ranking", ranking, RANKINGS)
        self.ranking = ranking
        self.leaf_level = _check_leaf_level(leaf_level)
        check_number("r", r, minimum=0)
        if not r < 1:
            raise ConfigError(f"r: must be a number in [0, 1), got {r!r}")
        self.r = float(r)
        if selection not in SELECTIONS:
            raise allowed("selection", selection, SELECTIONS)
        self.selection = selection
        if delta_u is None:  # a changed record is one removal and one addition
            self.selection_sensitivity = Sensitivity.declared(SELECTION_DELTA_U[selection],
                                                              ADD_REMOVE)
        else:
            self.selection_sensitivity = Sensitivity.declared(
                float(check_number("delta_u", delta_u, open_interval=(0, np.inf))), neighbours)
        if ranking == "practical":
            self.depth = self._practical(order, depth)
            self.reserved_share = self.r
            return
        if order is not None:
            raise ConfigError("order: only used with ranking=practical")
        if self.r == 0:
            raise ConfigError("r: ranking=statistical spends r·ε on the selection; give "
                              "0 < r < 1")
        self.selection_share = self.r
        if selection == "grouped_split":
            if depth not in (None, 2):
                raise ConfigError(f"depth: selection=grouped_split splits the attributes into 2 "
                                  f"clusters (allowed: 2), got {depth!r}")
            self.depth = 2
            return
        if self.leaf_level != "extra":
            raise ConfigError("leaf_level: selection=per_node ends every branch in the cross-"
                              "table of its remaining attributes (allowed: extra)")
        if depth is None:
            raise ConfigError("depth: selection=per_node needs the number of layers L (an "
                              "integer >= 1)")
        self.depth = int(check_number("depth", depth, integer=True, minimum=1))

    @property
    def delta_u(self) -> float:
        """The score sensitivity δ_u of the selection under the release's relation."""
        return self.selection_sensitivity.under(self.neighbour_relation)

    def sensitivities(self) -> list[Sensitivity]:
        return [self.level_sensitivity, self.selection_sensitivity]

    def _practical(self, order, depth) -> int:
        if not _is_list(order) or not order or \
                not all(_is_list(g) and g or not _is_list(g) for g in order):
            raise ConfigError("order: ranking=practical needs an order (a list of column "
                              "names, or of non-empty lists of names for grouped layers)")
        self.order = [list(g) if _is_list(g) else [g] for g in order]
        if depth is None:
            depth = len(self.order)
        check_number("depth", depth, integer=True, minimum=1)
        if not 1 <= depth <= len(self.order):
            raise ConfigError(f"depth: must lie in 1..{len(self.order)} (the length of "
                              f"order), got {depth!r}")
        return int(depth)

    def _named_layers(self, coding: AttributeCoding) -> list[tuple[int, ...]]:
        names = list(coding.schema.names)
        layers, seen = [], set()
        for g in self.order[: self.depth]:
            layer = []
            for a in g:
                if a not in names:
                    raise allowed("order", a, names)
                if a in seen:
                    raise ConfigError(f"order: column {a!r} appears twice")
                seen.add(a)
                layer.append(names.index(a))
            layers.append(tuple(sorted(layer)))
        return layers

    def _structures(self, codes, coding, zeros, eps_set, ledger, rng, j):
        r, _, p = codes.shape
        if self.ranking == "practical":
            levels = self._layers(self._named_layers(coding), p, self.leaf_level)
            return self._group_levels([levels] * r, coding.cards, zeros)
        if self.selection == "per_node":
            return self._per_node(codes, coding, zeros, eps_set, ledger, rng, j)
        aic = np.stack([aic_univariate(c) for c in marginal_counts(codes, coding.cards)], -1)
        splits = two_cluster_splits(p)
        chosen = exponential_mechanism(
            split_utility(aic, splits), sensitivity=self.delta_u, epsilon=self.r * eps_set,
            rng=rng, ledger=ledger,
            statistic=f"set {j + 1}: two-cluster split by mean univariate AIC")
        per_rep = []
        for k in range(r):
            c1 = tuple(int(a) for a in np.flatnonzero(splits[chosen[k]]))
            c2 = tuple(int(a) for a in np.flatnonzero(~splits[chosen[k]]))
            lower_first = aic[k, list(c1)].mean() <= aic[k, list(c2)].mean()
            per_rep.append((c1, c2) if lower_first else (c2, c1))
        return self._group_levels(per_rep, coding.cards, zeros)

    def _per_node(self, codes, coding, zeros, eps_set, ledger, rng, j):
        """Algorithm 1 on every replicate (its tree depends on its data)."""
        r, _, p = codes.shape
        if self.depth > p:
            raise ConfigError(f"depth: must lie in 1..{p} (the number of attributes), got "
                              f"{self.depth}")
        owns, out = [], []
        for k in range(r):
            owns.append(PrivacyLedger(relation=ledger.relation))
            tree = elect_branch_tree(codes[k], coding.cards, self.depth,
                                     self.r * eps_set / self.depth, rng, owns[-1],
                                     f"set {j + 1}", zeros, self.delta_u)
            out.append((np.array([k]), tree))
        record_once(ledger, owns)
        return out
