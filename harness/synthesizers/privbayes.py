"""PrivBayes: private data release via a Bayesian network (Zhang, Cormode, Procopiuc, Srivastava
& Xiao 2017, ACM TODS 42(4); the SIGMOD 2014 version's Algorithms 1–2), with the mutual-
information score, as DataSynthesizer (Ping, Stoyanovich & Howe 2017) implements it.

One released set of n records (n public) spends ε_set = ε/m (sets compose sequentially):

1. **Network learning** (GreedyBayes, ε₁ = β·ε_set): the root is an attribute drawn uniformly
   at random (data-independent); then d − 1 times, among all pairs (X, Π) of an attribute X not
   yet placed and a parent set Π of min(|V|, k) placed attributes, one pair is chosen by the
   exponential mechanism with budget ε₁/(d − 1) and score I(X; Π), the plug-in mutual
   information (nats), whose sensitivity S(I) is the paper's lemma (§4.2 of the SIGMOD 2014
   version, its Lemma 1), for n records and neighbours that differ in one record (n public):

       S = (1/n) ln n + ((n − 1)/n) ln(n/(n − 1))                  if |dom X| = 2 or |dom Π| = 2,
       S = (2/n) ln((n + 1)/2) + ((n − 1)/n) ln((n + 1)/(n − 1))    otherwise.

   Pair i is drawn with probability ∝ exp(ε₁/(d − 1) · I_i / (2 S_i)) (the paper's
   exp(I/(2Δ)), Δ = (d − 1)S/ε₁): the exponential mechanism on the scores I_i/S_i, each of
   sensitivity 1 (:func:`harness.privacy.exponential_mechanism`).
2. **Noisy conditionals** (NoisyConditionals, ε₂ = (1 − β)·ε_set): the joint counts of the
   first k + 1 attributes (one table) and of (X_i, Π_i) for every later attribute (d − k − 1
   tables), d − k tables in all, each over its full domain and each with Laplace noise of
   ε₂/(d − k). Changing one record moves one count of a table down and one up: l1 sensitivity
   2 (the paper's 2/n on the probability scale), so the scale is 2(d − k)/ε₂ on counts.
   Negative counts are clipped to 0 and every parent configuration normalised; an all-zero
   configuration is uniform (DataSynthesizer's rule).
3. **Sampling**: the first k + 1 attributes are drawn jointly from their clipped joint (the
   same distribution as the root and the derived conditionals of the paper), then each later
   attribute from its conditional given its sampled parents (ancestral order).

With degree k = 0 (or one attribute) there is no network to learn: every attribute is drawn
from its own noisy marginal and the whole ε_set goes to the d marginals (β is unused).

Modes (``mode``):

* ``correct``: as above; every spend is ledgered (d − 1 exponential-mechanism entries of
  ε₁/(d − 1), d − k Laplace entries of ε₂/(d − k) per set; substitution neighbours, the
  relation both sensitivities refer to).
* ``paper``: the 2019 DataSynthesizer code (PrivBayes.py as of 2019-03-14) that studies of that
  time ran. Identical to ``correct`` except that the conditionals' Laplace scale is
  2(d − k)/(n·ε₂) on *counts*: the paper's probability-scale value applied to counts, so the
  noise is ≈ 0 (corrected upstream in 2021 to (d − k)/ε₂, the add/remove count sensitivity).
  The ledger records the claimed ε₂/(d − k) per table (so the release claims ε, as the code
  did) and, per entry, the ε really spent, n·ε₂/(d − k) (``actual_epsilon``, mechanism
  ``laplace_MISSCALED``); ``PrivacyLedger.understated`` is True and the diagnostics
  ``privbayes_claim_understated`` (1) and ``privbayes_actual_epsilon`` say so per set. Not a
  DP release. Other quirks of that code are *not* reproduced: it calls an attribute binary
  when the data show ≤ 2 distinct values and takes each domain as 0..(largest observed code)
  (both data-dependent; here both come from the public schema), it iterates a Python set of
  names (its candidate order depends on the hash seed), and its independent-attribute
  histograms, noised with the full ε but unused for sampling, are not drawn.

Structural zeros of the schema are not enforced (as in DataSynthesizer; a network that does
not put the attributes of a structural zero in one table cannot): synthetic records may fall in
them.

Neighbours. Both sensitivities are for one changed record with n public (substitution), the
relation the release's ledger records. DataSynthesizer since 2021 (pip 0.1.13) uses
(d − k)/ε₂ on counts, the add/remove count sensitivity 1 beside the substitution MI
sensitivity, i.e. half the noise of ``correct``. Calibrated under add/remove (``study.relation``,
``Synthesizer.calibrate``; for equal privacy beside STEPS and UH), the counts take Δ = 1 and
the network scores our add/remove bound 3·h(n − 1) on the MI (:func:`mi_sensitivity_add_remove`,
n taken as public, as STEPS's add/remove bounds do); in ``paper`` mode the 2019 scale is kept
and its real spend is computed with the add/remove Δ.

Data: coded records (a RecordBatch (R, n, p) with an all-categorical schema), vectorised over
replicates and records: the mutual information of every candidate pair is computed once per
task (ε-free, ``prepare``) with one bincount per pair over all replicates' combined codes; the
network choice is one exponential-mechanism draw per step for all replicates; each table's
counts, noise and draws are one array operation over the replicates (tables of different
shapes padded to the largest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..histograms import draw_from_rows
from ..privacy import (
    Sensitivity,
    exponential_mechanism,
    laplace_mechanism,
    misscaled_laplace_mechanism,
)
from ..privacy.ledger import RELATIONS, SUBSTITUTION
from ..privacy.relation import entropy_add_remove_bound
from ..validation import check_number
from .base import SetwiseSynthesizer
from .coded import CodedRecordsSynthesize
from .pmi import categorical_cards
from .registry import register

MODES = ("correct", "paper")
#: l1 sensitivity of a table of counts: 1 when one record is added or removed, 2 when one record
#: changes (substitution, the paper's)
COUNT_SENSITIVITY = Sensitivity.counts()


def mi_sensitivity(n: int, binary: bool) -> float:
    """Sensitivity of the plug-in mutual information I(X; Π) of n records when one record
    changes (Zhang et al., SIGMOD 2014 §4.2, Lemma 1): the first form when X or Π
    has a domain of size 2."""
    if binary:
        return math.log(n) / n + (n - 1) / n * math.log(n / (n - 1))
    return 2 / n * math.log((n + 1) / 2) + (n - 1) / n * math.log((n + 1) / (n - 1))


def mi_sensitivity_add_remove(n: int) -> float:
    """A bound on the change of the plug-in mutual information I(X; Π) = H(X) + H(Π) − H(X, Π)
    of n ≥ 2 records when one record is added or removed (ours; the paper gives the
    substitution form only): each entropy moves by at most h(n − 1)
    (:func:`harness.privacy.relation.entropy_add_remove_bound`, decreasing in n; a removal
    leaves n − 1 records, an addition makes n + 1), so |ΔI| ≤ 3·h(n − 1). It takes n as public,
    as STEPS's add/remove AIC bound does."""
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n!r}")
    return 3.0 * entropy_add_remove_bound(n - 1)


def combined_codes(codes: np.ndarray, columns: np.ndarray, cards: np.ndarray):
    """Mixed-radix code (R, n) of each record's values in ``columns`` (R, s) (a column set per
    replicate; the last column least significant), and each replicate's number of cells
    (R,). ``codes`` (R, n, p) integer codes, ``cards`` (p,) levels per column."""
    radices = cards[columns]  # (R, s)
    values = np.take_along_axis(codes, columns[:, None, :], axis=2)  # (R, n, s)
    out = np.zeros(codes.shape[:2], dtype=np.int64)
    for j in range(columns.shape[1]):
        out = out * radices[:, j:j + 1] + values[..., j]
    return out, np.prod(radices, axis=1)


def table_counts(codes: np.ndarray, columns: np.ndarray, cards: np.ndarray):
    """Counts (R, C) of the cross-table of ``columns`` (R, s) in every replicate, cells in
    mixed-radix order (last column fastest), padded with zeros to the largest table C; and each
    replicate's number of cells (R,). One bincount over offset codes for all replicates."""
    code, sizes = combined_codes(codes, columns, cards)
    r = code.shape[0]
    width = int(sizes.max())
    flat = (code + np.arange(r, dtype=np.int64)[:, None] * width).ravel()
    return np.bincount(flat, minlength=r * width).reshape(r, width).astype(float), sizes


def mutual_information(joint: np.ndarray) -> np.ndarray:
    """Plug-in mutual information (nats) of tables ``joint`` (..., A, B) of counts (the
    empirical distribution's I(row; column); sklearn's ``mutual_info_score``)."""
    p = joint / joint.sum(axis=(-2, -1), keepdims=True)
    outer = p.sum(-1, keepdims=True) * p.sum(-2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / outer), 0.0)
    return terms.sum(axis=(-2, -1))


@dataclass(frozen=True)
class Candidates:
    """Every pair (child, parent set) with parent sets of one size: ``children`` (K,),
    ``parents`` (K, s) (sorted column indices), their mutual information (R, K) in every
    replicate and its sensitivity (K,)."""

    children: np.ndarray
    parents: np.ndarray
    mi: np.ndarray
    sensitivity: np.ndarray
    n: int | None = None  # records per data set (for the add/remove sensitivity)

    def scaled_scores(self, relation: str) -> np.ndarray:
        """I/S(I) (R, K), each of sensitivity 1 under ``relation``: S the substitution lemma
        (per pair) or the add/remove bound (:func:`mi_sensitivity_add_remove`)."""
        if relation == SUBSTITUTION:
            return self.mi / self.sensitivity
        if self.n is None:
            raise ValueError("the add/remove MI sensitivity needs the number of records n")
        return self.mi / mi_sensitivity_add_remove(self.n)


def candidate_scores(codes: np.ndarray, cards: np.ndarray, degree: int) -> dict[int, Candidates]:
    """The mutual information of every (child, parent set of size s) for s = 1..``degree`` in
    every replicate (ε-free: computed once and reused by every set and ε). Each parent set's
    combined code is built once; each pair is then one bincount over all replicates."""
    r, n, p = codes.shape
    offsets = np.arange(r, dtype=np.int64)[:, None]
    # one copy with a contiguous (r, n) block per column: every code below reads these blocks,
    # not strided columns of the whole array (the same integers)
    columns = np.ascontiguousarray(np.moveaxis(np.asarray(codes, dtype=np.int64), -1, 0))
    out = {}
    for size in range(1, degree + 1):
        children, parents, mi, sens = [], [], [], []
        for pa in combinations(range(p), size):
            parent_code = np.zeros((r, n), dtype=np.int64)
            for col in pa:
                parent_code = parent_code * int(cards[col]) + columns[col]
            n_parent = int(np.prod(cards[list(pa)]))
            for child in (c for c in range(p) if c not in pa):
                width = n_parent * int(cards[child])
                flat = (parent_code * int(cards[child]) + columns[child] + offsets * width)
                counts = np.bincount(flat.ravel(), minlength=r * width).astype(float)
                mi.append(mutual_information(counts.reshape(r, n_parent, int(cards[child]))))
                children.append(child)
                parents.append(pa)
                sens.append(mi_sensitivity(n, cards[child] == 2 or n_parent == 2))
        out[size] = Candidates(np.array(children), np.array(parents, dtype=np.int64).reshape(
            len(children), size), np.stack(mi, axis=1), np.array(sens), n)
    return out


@dataclass(frozen=True)
class Network:
    """Learned networks of R replicates: ``order`` (R, d) attributes in network order (root
    first) and ``parents`` (R, d, k) the parent columns of the attribute at each position (the
    first k positions hold the placed attributes, −1 padded; positions ≥ k hold k parents)."""

    order: np.ndarray
    parents: np.ndarray

    def parent_sets(self, replicate: int) -> dict[int, tuple[int, ...]]:
        """Attribute → sorted tuple of its parents in one replicate."""
        return {int(a): tuple(sorted(int(x) for x in self.parents[replicate, i] if x >= 0))
                for i, a in enumerate(self.order[replicate])}


def learn_network(scores: dict[int, Candidates], cards: np.ndarray, degree: int,
                  epsilon: float, rng, ledger, set_label: str = "",
                  root: np.ndarray | None = None) -> Network:
    """GreedyBayes (Zhang et al., SIGMOD 2014 Algorithm 2) with the MI score for R
    replicates at once: a uniform random root (or the given ``root`` (R,), e.g. in tests), then
    d − 1 exponential-mechanism choices of ε/(d − 1) each over the pairs (X ∉ V, Π ⊆ V,
    |Π| = min(|V|, k)), scores I/S of sensitivity 1."""
    r = next(iter(scores.values())).mi.shape[0]
    d = cards.size
    order = np.empty((r, d), dtype=np.int64)
    parents = np.full((r, d, degree), -1, dtype=np.int64)
    order[:, 0] = rng.integers(d, size=r) if root is None else root
    placed = np.zeros((r, d), dtype=bool)
    placed[np.arange(r), order[:, 0]] = True
    for step in range(1, d):
        size = min(step, degree)
        cand = scores[size]
        ok = ~placed[:, cand.children] & placed[:, cand.parents].all(axis=-1)
        pick = exponential_mechanism(
            np.where(ok, cand.scaled_scores(ledger.relation), -np.inf), sensitivity=1.0,
            epsilon=epsilon / (d - 1), rng=rng, ledger=ledger,
            statistic=f"{set_label}network step {step}: (child, parents) by I(X; Π)/S(I)")
        order[:, step] = cand.children[pick]
        parents[:, step, :size] = cand.parents[pick]
        placed[np.arange(r), order[:, step]] = True
    return Network(order, parents)


def independent_network(r: int, d: int) -> Network:
    """Degree 0 (or one attribute): no parents, attributes in column order (ε-free)."""
    return Network(np.tile(np.arange(d), (r, 1)), np.empty((r, d, 0), dtype=np.int64))


def table_columns(network: Network, degree: int) -> list[np.ndarray]:
    """The columns (R, s) of each noisy table, child last: first the first k + 1 attributes in
    network order (one joint), then (parents, child) of every later attribute."""
    first = network.order[:, :degree + 1]
    later = [np.concatenate([network.parents[:, i, :], network.order[:, i:i + 1]], axis=1)
             for i in range(degree + 1, network.order.shape[1])]
    return [first, *later]


def noisy_tables(codes, cards, network: Network, degree: int, epsilon: float, mode: str,
                 rng, ledger, set_label: str = "") -> list[np.ndarray]:
    """NoisyConditionals: every table's counts (R, C) plus Laplace noise of ε/(number of
    tables) each, sensitivity 2 (``correct``), or the 2019 code's scale 2(d − k)/(n·ε) on
    counts recorded as mis-scaled (``paper``). Returns the noisy (unclipped) counts, padded
    cells zero."""
    n = codes.shape[1]
    columns = table_columns(network, degree)
    share = epsilon / len(columns)
    out = []
    for t, cols in enumerate(columns):
        counts, sizes = table_counts(codes, cols, cards)
        label = f"{set_label}table {t + 1} of {len(columns)}: counts of {cols.shape[1]} attributes"
        if mode == "correct":
            noisy = laplace_mechanism(counts, sensitivity=COUNT_SENSITIVITY, epsilon=share,
                                      rng=rng, ledger=ledger, statistic=label)
        else:
            noisy = misscaled_laplace_mechanism(
                counts, sensitivity=COUNT_SENSITIVITY, claimed_epsilon=share,
                scale=2.0 * len(columns) / (n * epsilon), rng=rng, ledger=ledger,
                statistic=label, note="the 2019 DataSynthesizer scale 2(d − k)/(n·ε₂) on counts")
        out.append(np.where(np.arange(counts.shape[1]) < sizes[:, None], noisy, 0.0))
    return out


def sample_records(tables: list[np.ndarray], network: Network, cards: np.ndarray, degree: int,
                   n: int, rng) -> np.ndarray:
    """Ancestral sampling of n records (R, n, d) from the clipped noisy tables: the first k + 1
    attributes jointly from table 1, then each later attribute given its sampled parents."""
    columns = table_columns(network, degree)
    r, d = network.order.shape
    out = np.zeros((r, n, d), dtype=np.int64)
    rows = np.arange(r, dtype=np.int64)[:, None]
    for t, (noisy, cols) in enumerate(zip(tables, columns, strict=True)):
        radices = cards[cols]  # (R, s)
        sizes = np.prod(radices, axis=1)
        valid = np.arange(noisy.shape[1]) < sizes[:, None]
        clipped = np.where(valid, np.maximum(noisy, 0.0), 0.0)
        if t == 0:
            probs = _uniform_if_empty(clipped, valid)
            cell = draw_from_rows(probs, np.broadcast_to(rows, (r, n)), rng)
            for j in range(cols.shape[1] - 1, -1, -1):  # undo the mixed radix, last fastest
                _put_column(out, cols[:, j], cell % radices[:, j:j + 1])
                cell = cell // radices[:, j:j + 1]
            continue
        n_child = radices[:, -1]
        width = int(n_child.max())
        n_rows = int((sizes // n_child).max())
        cond = np.zeros((r, n_rows, width))
        rr, cc = np.nonzero(valid)
        cond[rr, cc // n_child[rr], cc % n_child[rr]] = clipped[rr, cc]
        cond = _uniform_if_empty(cond, np.arange(width) < n_child[:, None, None])
        parent_code, _ = combined_codes(out, cols[:, :-1], cards)
        child = draw_from_rows(cond.reshape(r * n_rows, width), rows * n_rows + parent_code,
                               rng)
        _put_column(out, cols[:, -1], child)
    return out


def _uniform_if_empty(weights: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Rows (last axis) of non-negative ``weights``; a row with no weight on its ``valid``
    cells becomes uniform over them (DataSynthesizer's rule for an all-zero conditional)."""
    valid = np.broadcast_to(valid, weights.shape)
    empty = ~(weights > 0).any(axis=-1, keepdims=True)
    return np.where(empty & valid, 1.0, weights)


def _put_column(out: np.ndarray, column: np.ndarray, values: np.ndarray) -> None:
    """out[r, :, column[r]] = values[r] for every replicate r."""
    r = out.shape[0]
    out[np.arange(r)[:, None], np.arange(out.shape[1])[None, :], column[:, None]] = values


@register
class PrivBayes(CodedRecordsSynthesize, SetwiseSynthesizer):
    """PrivBayes with the MI score (see the module docstring): ``k`` the degree (largest parent
    set), ``beta`` the share of each set's budget that learns the network, ``mode`` ``correct``
    or ``paper`` (the 2019 DataSynthesizer noise, not DP), ``m`` sets of n records each."""

    name = "privbayes"
    input_kind = "coded"
    neighbour_relation = SUBSTITUTION
    #: substitution (the paper's); add/remove with counts Δ = 1 and the MI bound of
    #: :func:`mi_sensitivity_add_remove` (n public)
    relations = RELATIONS
    uses_prepare = True

    def __init__(self, k: int = 2, beta: float = 0.5, mode: str = "correct", m: int = 1):
        super().__init__(m)
        self.k = int(check_number("k", k, integer=True, minimum=0))
        self.beta = float(check_number("beta", beta, open_interval=(0, 1)))
        if mode not in MODES:
            raise allowed("mode", mode, MODES)
        self.mode = mode

    def _codes(self, data) -> tuple[np.ndarray, np.ndarray]:
        cards = np.array(categorical_cards(data, self.name), dtype=np.int64)
        if data.n < 2:
            raise ConfigError(f"data: {self.name} needs at least 2 records, got {data.n}")
        return data.values.astype(np.int64), cards

    def degree(self, d: int) -> int:
        """The effective degree min(k, d − 1)."""
        return min(self.k, d - 1)

    def prepare(self, data, rng):
        """The mutual information of every candidate pair in every replicate (ε-free)."""
        codes, cards = self._codes(data)
        return candidate_scores(codes, cards, self.degree(cards.size))

    def _release(self, data, epsilon, ledger, rng, prepared=None):
        self._prepared = prepared
        try:
            return super()._release(data, epsilon, ledger, rng)
        finally:
            del self._prepared

    def _one_set(self, data, eps_set, ledger, rng, j):
        codes, cards = self._codes(data)
        r, n, d = codes.shape
        degree = self.degree(d)
        label = f"set {j + 1}: "
        if degree == 0:
            network, eps_tables = independent_network(r, d), eps_set
        else:
            network = learn_network(self._prepared, cards, degree, self.beta * eps_set, rng,
                                    ledger, label)
            eps_tables = (1.0 - self.beta) * eps_set
        tables = noisy_tables(codes, cards, network, degree, eps_tables, self.mode, rng, ledger,
                              label)
        records = sample_records(tables, network, cards, degree, n, rng)
        out = RecordBatch(records.astype(data.values.dtype), None, 1, data.columns, None, None,
                          data.schema)
        return out, self._diagnostics(network, data.schema.names, eps_set, eps_tables, n)

    def _diagnostics(self, network: Network, names, eps_set, eps_tables, n) -> dict:
        """Per replicate: each attribute's position in the network and its parents as a bit
        mask (Σ 2^parent column index), and whether (and how far) the claimed ε understates the
        spend."""
        r, d = network.order.shape
        position = np.argsort(network.order, axis=1)
        bits = np.where(network.parents >= 0, 2.0 ** np.maximum(network.parents, 0), 0.0)
        mask = np.take_along_axis(bits.sum(axis=-1), position, axis=1)
        # paper mode: Δ/scale per table with scale 2(d − k)/(n·ε₂), i.e. Δ·n·ε₂/2 in all
        spent = COUNT_SENSITIVITY.under(self.neighbour_relation) * n * eps_tables / 2.0
        actual = eps_set if self.mode == "correct" else eps_set - eps_tables + spent
        out = {"privbayes_claim_understated": np.full(r, float(self.mode == "paper")),
               "privbayes_actual_epsilon": np.full(r, float(actual))}
        for a, name in enumerate(names):
            out[f"privbayes_position_{name}"] = position[:, a].astype(float)
            out[f"privbayes_parents_{name}"] = mask[:, a]
        return out
