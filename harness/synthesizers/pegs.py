"""Perturbed Gibbs samplers: PeGS and block PeGS with reset (Park & Ghosh, arXiv 1312.5370;
spec 001 §1).

PeGS (Table 1, §3) has three steps: (1) *disintegrate* the original data D into one hashed
count table per feature, T_i[key, j] = n_ij (§3.2, :mod:`.feature_hash`); (2) *inject noise*:
every conditional becomes the perturbed conditional of Eq. 4,

    Pr_{D,α}(x_i = j | h(x_−i)) = (n_ij + α) / (N_h + C_i·α),     N_h = Σ_j n_ij   (Eq. 5);

(3) *synthesize*: one systematic-scan sweep x_i ~ Pr_{D,α}(x_i | h(x_1:i−1, s_i+1:M)), i = 1..M,
turns a seed record s into one synthetic record (Eq. 1, §3.3A).

Privacy (§3.3A, Eq. 6, spec §1.4). Between neighbours, one entry of each table differs, and each
table is looked up once per sweep, so every factor of Pr(x | s) moves by at most a factor 1 + 1/α
in either direction: a sweep is M·log(1 + 1/α)-DP. The paper prints Eq. 6 as α ≤ 1/(e^{ε/M} − 1),
which points the wrong way; the smallest valid α is :func:`alpha_for`, α(ε) = 1/expm1(ε/M).
The bound holds for add/remove neighbours (the paper's D1 = D2 ∪ {x^d}) and, because each lookup
sees one key and a changed record moves one count within it (or one count of one key), for
substitution neighbours too with the same ε (not 2ε). For PeGS.rs blocks the substitution bound
*is* 2× the add/remove one: a substitution changes two keys of a table (the removed row's and the
added row's), and a block of B ≥ 2 sweeps can visit both before either is reset. The exact
enumeration in tests/harness/privacy/test_pegs_privacy.py checks all four statements. The ledger
records the paper's relation, add/remove, for both methods.

Privacy parameter: ``epsilon_sample``, the ε of one synthetic sample (one sweep); a release of
m sets of n_out samples after ``sweeps_per_sample`` sweeps each claims m·n_out·sweeps·ε_sample
(sequential composition over samples; n_out is public). PeGS.rs (§3.4, spec §1.6) draws B
sweeps per seed with α = 1/expm1(ε′·B/M), resets every (table, key) a chain has visited to the
uniform 1/C_i for the rest of its block, and restores the full tables at each block start:
a block of B samples costs B·ε′, so n_out samples in ⌈n_out/B⌉ blocks claim m·⌈n_out/B⌉·B·ε′.

Caveats (the ε guarantee conditions on them; spec §1.4, none is charged by the paper):

* the **hash structure** (priority orders, head size, salts) must not depend on D:
  ``structure="given"`` (orders from the config, or feature-index order) or ``"public"`` (the
  paper's MI order computed on a public part of the original data, ``parts[public_part]``).
  ``structure="mutual_information"`` (the MI order of the data being released, as in the paper)
  is refused: it is not covered by the guarantee, and the enumeration test shows neighbours whose
  probability ratio exceeds ε under it;
* the **seed pool** ``"original"`` (default) draws seeds from D's rows and ``"marginal"`` from D's
  perturbed marginals; the claim conditions on the seed (``"uniform"`` seeds do not read D);
* ``marginal_alpha`` (α_j ∝ Pr_D(x_i = j), min_j α_j = α(ε)) reads D's marginals, and the
  ``l_diversity`` mode (§2.3, §3.3B) raises α per key to a data-dependent α*; neither is covered.

Diagnostics name these (``seed_pool_from_data``, ``data_dependent_alpha``) and the ledger note
repeats them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..privacy import LedgerEntry
from ..privacy.ledger import ADD_REMOVE
from ..schema import Categorical
from ..validation import check_number
from .base import Synthesizer
from .coded import CodedRecordsSynthesize
from .feature_hash import TAIL_HASHES, TableHash, build_hashes, count_tables, mi_orders
from .registry import register

STRUCTURES = ("given", "public")
REFUSED_STRUCTURES = ("mutual_information",)
POOLS = ("original", "marginal", "uniform")
#: α* of the l-diversity mode is searched up to this cap; beyond it the conditional is uniform
L_DIVERSITY_CAP = 1e12


def alpha_for(epsilon: float, n_features: int, block: int = 1) -> float:
    """The smallest pseudo-count α for which one sweep over M features is (ε·B)-DP:
    α = 1/expm1(ε·B/M) (Park & Ghosh Eq. 6 with its inequality corrected, spec §1.4 [RES];
    B > 1: PeGS.rs §3.4 with ε the per-sample ε′)."""
    return 1.0 / math.expm1(float(epsilon) * int(block) / int(n_features))


def epsilon_of(alpha: float, n_features: int, block: int = 1) -> float:
    """Inverse of :func:`alpha_for`: M·log(1 + 1/α) per sweep (per block), divided by B per
    sample (spec §4)."""
    return int(n_features) * math.log1p(1.0 / float(alpha)) / int(block)


def perturbed_conditional(counts: np.ndarray, alpha) -> np.ndarray:
    """Eq. 4 over the last axis: (n_ij + α_j)/(N + Σ_j α_j) with α broadcast to ``counts``
    (a scalar, per category, or per key). An infinite α, or α = 0 on an empty key, gives the
    uniform 1/C_i (spec §1.5 [RES], §1.9)."""
    counts = np.asarray(counts, dtype=float)
    a = np.broadcast_to(np.asarray(alpha, dtype=float), counts.shape)
    c = counts.shape[-1]
    total = counts.sum(-1, keepdims=True) + a.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (counts + a) / total
    uniform = np.isinf(a).any(-1, keepdims=True) | (total == 0)
    return np.where(uniform, 1.0 / c, p)


def _entropy(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=-1)


def l_diversity_alpha(counts: np.ndarray, l: float, iterations: int = 60) -> np.ndarray:
    """Per key, the α* ≥ 0 at which the perturbed conditional reaches entropy log l (Eq. 3,
    §3.3B): 0 if it already does at α = 0, +inf (uniform) if l ≥ C_i or the doubling of the
    upper end reaches :data:`L_DIVERSITY_CAP` (spec §1.5 [RES] and REVIEW note). H_α is
    increasing in α, so bisection on [0, α_hi] finds α*."""
    counts = np.asarray(counts, dtype=float)
    lead, c = counts.shape[:-1], counts.shape[-1]
    target = math.log(l)
    if l >= c:
        exact = np.isclose(_entropy(perturbed_conditional(counts, 0.0)), math.log(c))
        return np.where(exact, 0.0, np.inf)
    done = _entropy(perturbed_conditional(counts, 0.0)) >= target
    hi = np.ones(lead)
    while True:
        short = ~done & (_entropy(perturbed_conditional(counts, hi[..., None])) < target)
        short &= hi < L_DIVERSITY_CAP
        if not short.any():
            break
        hi = np.where(short, hi * 2.0, hi)
    capped = ~done & (_entropy(perturbed_conditional(counts, hi[..., None])) < target)
    lo = np.zeros(lead)
    for _ in range(iterations):
        mid = (lo + hi) / 2
        low = _entropy(perturbed_conditional(counts, mid[..., None])) < target
        lo, hi = np.where(low, mid, lo), np.where(low, hi, mid)
    return np.where(done, 0.0, np.where(capped, np.inf, hi))


class PegsModel:
    """Fitted PeGS of R data sets sharing one hash structure: the hashes and the count tables
    T_i (R, H_i, C_i). ``conditionals`` perturbs them (Eq. 4); ``sweep`` and ``run`` sample
    chains vectorised over (replicate, chain); ``trace`` records one sweep (Table 3)."""

    def __init__(self, hashes: tuple[TableHash, ...], codes: np.ndarray, cards):
        self.hashes = hashes
        self.cards = tuple(int(c) for c in cards)
        self.tables = count_tables(hashes, codes, self.cards)

    @property
    def n_features(self) -> int:
        return len(self.cards)

    def conditionals(self, alpha: float, category_alpha: list | None = None,
                     l_diversity: float | None = None) -> list[np.ndarray]:
        """Perturbed conditional tables P_i (R, H_i, C_i) of Eq. 4: the same α for every
        category, per-category α_ij (``category_alpha``: arrays (R, C_i)), or the l-diversity
        α per key, max(α, α*_key)."""
        out = []
        for i, t in enumerate(self.tables):
            if category_alpha is not None:
                a = category_alpha[i][:, None, :]
            elif l_diversity is not None:
                a = np.maximum(alpha, l_diversity_alpha(t, l_diversity))[..., None]
            else:
                a = alpha
            out.append(perturbed_conditional(t, a))
        return out

    def step(self, i: int, state: np.ndarray, rep: np.ndarray, probs, u: np.ndarray,
             reset_keys: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Redraw feature i of every chain (``state`` (K, M), replicate ``rep`` (K,)) from its
        perturbed conditional at the chain's current key, by inversion of the uniforms ``u``
        (K,); a key in the chain's ``reset_keys`` (K, b) draws from 1/C_i (PeGS.rs). Returns
        the keys looked up and the mask of reset hits."""
        keys = self.hashes[i].keys(state)
        p = probs[i][rep, keys]
        hit = np.zeros(keys.shape, dtype=bool)
        if reset_keys is not None and reset_keys.shape[1]:
            hit = (reset_keys == keys[:, None]).any(axis=1)
            p = np.where(hit[:, None], 1.0 / self.cards[i], p)
        draw = (u[:, None] >= np.cumsum(p, axis=1)).sum(axis=1)
        state[:, i] = np.minimum(draw, self.cards[i] - 1)
        return keys, hit

    def run(self, seeds: np.ndarray, rep: np.ndarray, probs, n_sweeps: int, rng,
            reset: bool = False) -> tuple[np.ndarray, int]:
        """``n_sweeps`` systematic-scan sweeps of chains started at ``seeds`` (K, M); with
        ``reset`` every (table, key) a chain visited is uniform for it until the end (one
        PeGS.rs block, spec §1.6). Each sweep draws its uniforms as ``rng.random((M, K))``.
        Returns the states after every sweep (n_sweeps, K, M) and the number of reset hits."""
        state = np.array(seeds, dtype=np.int64, copy=True)
        k, p = state.shape
        visited = [np.empty((k, n_sweeps), dtype=np.int64) for _ in range(p)] if reset else None
        out = np.empty((n_sweeps, k, p), dtype=np.int64)
        hits = 0
        for b in range(n_sweeps):
            u = rng.random((p, k))
            for i in range(p):
                rk = visited[i][:, :b] if reset else None
                keys, hit = self.step(i, state, rep, probs, u[i], rk)
                hits += int(hit.sum())
                if reset:
                    visited[i][:, b] = keys
            out[b] = state
        return out, hits

    def trace(self, seed_row, epsilon: float, rng, replicate: int = 0) -> np.ndarray:
        """The states of one sweep from ``seed_row`` at ``epsilon`` per sample (Park & Ghosh
        Table 3, spec E0): row 0 is the seed, row i the record after x_i was redrawn."""
        probs = self.conditionals(alpha_for(epsilon, self.n_features))
        state = np.asarray(seed_row, dtype=np.int64).reshape(1, -1).copy()
        rep = np.array([replicate])
        u = rng.random((self.n_features, 1))
        rows = [state[0].copy()]
        for i in range(self.n_features):
            self.step(i, state, rep, probs, u[i])
            rows.append(state[0].copy())
        return np.stack(rows)


def draw_seeds(pool: str, codes: np.ndarray, cards, n_chains: int, alpha: float,
               rng) -> np.ndarray:
    """Seed records (R, n_chains, M) from the pool (spec §1.8): ``original`` rows of each data
    set without replacement (in successive random permutations when n_chains > n),
    ``marginal`` independent draws from the perturbed marginals (n_j + α)/(n + C·α), or
    ``uniform`` categories."""
    r, n, p = codes.shape
    if pool == "original":
        rounds = -(-n_chains // n)
        order = np.concatenate([rng.random((r, n)).argsort(axis=1) for _ in range(rounds)], 1)
        return np.take_along_axis(codes, order[:, :n_chains, None], axis=1)
    seeds = np.empty((r, n_chains, p), dtype=np.int64)
    for i, c in enumerate(cards):
        if pool == "uniform":
            seeds[..., i] = rng.integers(0, c, size=(r, n_chains))
            continue
        counts = np.stack([np.bincount(codes[k, :, i], minlength=c) for k in range(r)])
        cum = np.cumsum(perturbed_conditional(counts, alpha), axis=1)
        u = rng.random((r, n_chains))
        seeds[..., i] = np.minimum((u[..., None] >= cum[:, None, :]).sum(-1), c - 1)
    return seeds


class _PerturbedGibbs(CodedRecordsSynthesize, Synthesizer):
    """Shared configuration, data checks, hash structure and release of PeGS and PeGS.rs."""

    privacy_parameter = "epsilon_sample"
    neighbour_relation = ADD_REMOVE
    input_kind = "coded"  # a RecordBatch of integer codes with a categorical schema

    def __init__(self, m: int, n_out, head_size, tail_hash, structure, orders, public_part,
                 hash_seed, pool, marginal_alpha, l_diversity):
        super().__init__(m)
        self.n_out = None if n_out is None else int(
            check_number("n_out", n_out, integer=True, minimum=1))
        self.head_size = int(check_number("head_size", head_size, integer=True, minimum=0))
        if tail_hash not in TAIL_HASHES:
            raise allowed("tail_hash", tail_hash, TAIL_HASHES)
        if structure in REFUSED_STRUCTURES:
            raise ConfigError(
                f"structure: {structure!r} orders the hash by the data being released, which the "
                f"ε guarantee does not cover (allowed: {', '.join(STRUCTURES)})")
        if structure not in STRUCTURES:
            raise allowed("structure", structure, STRUCTURES)
        if orders is not None and structure != "given":
            raise ConfigError("orders: only used with structure 'given'")
        if pool not in POOLS:
            raise allowed("pool", pool, POOLS)
        if l_diversity is not None:
            check_number("l_diversity", l_diversity, minimum=1)
            if marginal_alpha:
                raise ConfigError("l_diversity: not combined with marginal_alpha (allowed: "
                                  "one of them)")
        self.tail_hash, self.structure, self.orders = tail_hash, structure, orders
        self.public_part = str(public_part)
        self.hash_seed = int(check_number("hash_seed", hash_seed, integer=True, minimum=0))
        self.pool, self.marginal_alpha, self.l_diversity = pool, bool(marginal_alpha), l_diversity
        if structure == "public":
            self.needs_parts = (self.public_part,)

    # --- data and hash structure ------------------------------------------------------------
    @staticmethod
    def _codes(data) -> tuple[np.ndarray, tuple[int, ...]]:
        """Integer codes (R, n, M) and cardinalities from a RecordBatch with a categorical
        schema; anything else is a one-line ConfigError."""
        if not isinstance(data, RecordBatch) or data.schema is None or \
                data.values.ndim != 3:
            raise ConfigError("data: PeGS synthesizes coded records (a RecordBatch (R, n, p) "
                              "with a schema of categorical columns)")
        cols = data.schema.columns
        if len(cols) != data.n_columns or not all(isinstance(c, Categorical) for c in cols):
            raise ConfigError("data.schema: every column must be categorical "
                              f"(got {', '.join(c.name for c in cols)})")
        cards = tuple(len(c.levels) for c in cols)
        v = data.values
        bad = (v != np.round(v)) | (v < 0) | (v >= np.asarray(cards))
        if bad.any():
            j = int(np.argwhere(bad)[0][-1])
            raise ConfigError(f"data: column {cols[j].name!r} needs integer codes in "
                              f"0..{cards[j] - 1}")
        return v.astype(np.int64), cards

    def _given_orders(self, names) -> list[tuple[int, ...]]:
        """Per target, the configured priority (column names or indices; a mapping by target
        name or a list in column order), completed by the unnamed features in index order;
        without ``orders``, feature-index order."""
        p = len(names)
        given = self.orders
        if given is None:
            given = {}
        elif isinstance(given, Mapping):
            unknown = set(given) - set(names)
            if unknown:
                raise allowed("orders", sorted(unknown)[0], names)
        elif len(given) == p:
            given = {names[i]: given[i] for i in range(p)}
        else:
            raise ConfigError(f"orders: give one list per column ({p}), or a mapping by name")
        out = []
        for i, name in enumerate(names):
            first = [names.index(k) if isinstance(k, str) and k in names else k
                     for k in given.get(name, ())]
            ok = all(isinstance(k, int) and 0 <= k < p and k != i for k in first)
            if not ok or len(set(first)) != len(first):
                raise ConfigError(f"orders.{name}: give distinct other columns (allowed: "
                                  f"{', '.join(n for n in names if n != name)})")
            out.append(tuple(first) + tuple(k for k in range(p) if k != i and k not in first))
        return out

    def structures(self, data, cards, parts=None) -> list[tuple[tuple[int, ...], ...]]:
        """The priority orders of every replicate: configured, or the MI order of the public
        part of the original data (replicate by replicate)."""
        r = data.values.shape[0]
        if self.structure == "given":
            return [tuple(self._given_orders(list(data.schema.names)))] * r
        public = (parts or {}).get(self.public_part)
        if not isinstance(public, RecordBatch) or public.schema != data.schema:
            raise ConfigError(f"parts.{self.public_part}: structure 'public' needs a part of "
                              f"coded records with the training data's schema")
        codes, _ = self._codes(public)
        return [tuple(mi_orders(codes[k], cards)) for k in range(r)]

    def fit(self, data: RecordBatch, parts=None, replicate: int = 0) -> PegsModel:
        """The fitted model of one replicate (notebook use, e.g. :meth:`PegsModel.trace`)."""
        codes, cards = self._codes(data)
        orders = self.structures(data, cards, parts)[replicate]
        hashes = build_hashes(cards, orders, self.head_size, self.tail_hash, self.hash_seed)
        return PegsModel(hashes, codes[replicate:replicate + 1], cards)

    # --- privacy ----------------------------------------------------------------------------
    block: int = 1

    def sweeps(self) -> int:
        return 1

    def _n_out(self, data) -> int:
        return self.n_out if self.n_out is not None else int(data.n)

    def _n_chains(self, n_out: int) -> int:
        return -(-n_out // self.block)

    def set_epsilon(self, epsilon_sample: float, data) -> float:
        """ε of one released set: chains × sweeps per chain × ε per sweep (= B·ε′ per block
        for PeGS.rs, ε·sweeps_per_sample per PeGS sample)."""
        chains = self._n_chains(self._n_out(data))
        return chains * self.sweeps() * float(epsilon_sample) * self.block

    def claimed_epsilon(self, privacy, data=None) -> float:
        return self.m * self.set_epsilon(privacy, data)

    def privacy_summary(self, epsilon_sample: float, n_features: int) -> dict:
        """ε per sample and per block, α and B at ``epsilon_sample`` (spec §6 ``privacy()``)."""
        return {"epsilon_sample": float(epsilon_sample),
                "epsilon_block": float(epsilon_sample) * self.block,
                "alpha": alpha_for(epsilon_sample, n_features, self.block),
                "B": self.block, "sweeps_per_sample": self.sweeps()}

    # --- release ----------------------------------------------------------------------------
    #: the count tables do not depend on ε: with a configured structure they are built once per
    #: task and reused over the privacy grid (spec §6 Budget); ``prepare`` reads no randomness
    uses_prepare = True

    def prepare(self, data, rng, parts=None):
        """The fitted models of every replicate (grouped by hash structure): ε-free, so built
        once per task and reused at every ε."""
        return self._models(data, parts)

    def _models(self, data, parts=None) -> list[tuple[np.ndarray, PegsModel]]:
        codes, cards = self._codes(data)
        groups: dict = {}
        for k, orders in enumerate(self.structures(data, cards, parts)):
            groups.setdefault(orders, []).append(k)
        return [(np.asarray(idx), PegsModel(
            build_hashes(cards, orders, self.head_size, self.tail_hash, self.hash_seed),
            codes[idx], cards)) for orders, idx in groups.items()]

    def _release(self, data, epsilon_sample, ledger, rng, prepared=None, parts=None):
        codes, cards = self._codes(data)
        r, _, p = codes.shape
        n_out = self._n_out(data)
        alpha = alpha_for(epsilon_sample, p, self.block)
        models = prepared if prepared is not None else self._models(data, parts)
        out = np.empty((r, self.m, n_out, p), dtype=data.values.dtype)
        hits = np.zeros((r, self.m))
        for j in range(self.m):
            for idx, model in models:
                probs = model.conditionals(alpha, self._category_alpha(codes[idx], cards, alpha),
                                           self.l_diversity)
                records, n_hits = self._sample(model, codes[idx], probs, alpha, n_out, rng)
                out[idx, j] = records
                hits[idx, j] = n_hits / len(idx)
            ledger.for_set(j).record(LedgerEntry(
                f"set {j + 1}: {n_out} records by perturbed Gibbs sweeps", "perturbed_gibbs",
                self.set_epsilon(epsilon_sample, data), None, alpha, note=self._note(alpha)))
        data_alpha = float(self.marginal_alpha or self.l_diversity is not None)
        diagnostics = {"alpha": np.full((r, self.m), alpha),
                       "seed_pool_from_data": np.full((r, self.m), float(self.pool != "uniform")),
                       "data_dependent_alpha": np.full((r, self.m), data_alpha)}
        if self.block > 1:
            diagnostics["reset_hits_per_chain"] = hits / self._n_chains(n_out)
        return RecordBatch(out, None, 1, data.columns, None, None, data.schema), diagnostics

    def _category_alpha(self, codes, cards, alpha) -> list | None:
        """α_ij ∝ Pr(x_i = j) with min_j α_ij = α (spec §1.3 REVIEW note), Pr smoothed to
        (n_j + 1)/(n + C_i) so that no category gets α = 0; None when the option is off."""
        if not self.marginal_alpha:
            return None
        out = []
        for i, c in enumerate(cards):
            counts = np.stack([np.bincount(x[:, i], minlength=c) for x in codes]) + 1.0
            out.append(alpha * counts / counts.min(axis=1, keepdims=True))
        return out

    def _sample(self, model, codes, probs, alpha, n_out, rng):
        chains = self._n_chains(n_out)
        seeds = draw_seeds(self.pool, codes, model.cards, chains, alpha, rng)
        r = codes.shape[0]
        rep = np.repeat(np.arange(r), chains)
        states, hits = model.run(seeds.reshape(r * chains, -1), rep, probs,
                                 self.sweeps() * self.block, rng, reset=self.block > 1)
        if self.block == 1:
            return states[-1].reshape(r, chains, -1), hits
        # (B, R·chains, M) → each chain's B samples in order, chains one after another
        blocks = states.reshape(self.block, r, chains, -1).transpose(1, 2, 0, 3)
        return blocks.reshape(r, chains * self.block, -1)[:, :n_out], hits

    def _note(self, alpha: float) -> str:
        caveats = []
        if self.pool != "uniform":
            caveats.append(f"seed pool {self.pool!r} reads D (the claim conditions on s)")
        if self.marginal_alpha:
            caveats.append("α_j ∝ Pr_D(x_i = j) reads D")
        if self.l_diversity is not None:
            caveats.append("the l-diversity α* per key reads D and is not covered")
        caveats.append(f"hash structure {self.structure!r} does not read the released data")
        if self.block > 1:
            caveats.append("under substitution a block costs up to 2·B·ε′")
        return f"α = {alpha:.6g}; " + "; ".join(caveats)


@register
class PerturbedGibbs(_PerturbedGibbs):
    """PeGS (Park & Ghosh §3, Table 1): one sweep per seed, one sample per seed; parameters
    ``head_size`` (the paper's m, spec default 2), ``tail_hash``, ``structure``/``orders``/
    ``public_part``, ``hash_seed``, ``pool``, ``sweeps_per_sample`` (cost × sweeps),
    ``marginal_alpha``, ``l_diversity``, ``n_out`` (default: the original n), ``m`` sets."""

    name = "pegs"

    def __init__(self, m: int = 1, n_out: int | None = None, head_size: int = 2,
                 tail_hash: str = "splitmix_parity", structure: str = "given", orders=None,
                 public_part: str = "public", hash_seed: int = 0, pool: str = "original",
                 sweeps_per_sample: int = 1, marginal_alpha: bool = False,
                 l_diversity: float | None = None):
        super().__init__(m, n_out, head_size, tail_hash, structure, orders, public_part,
                         hash_seed, pool, marginal_alpha, l_diversity)
        self.sweeps_per_sample = int(check_number("sweeps_per_sample", sweeps_per_sample,
                                                  integer=True, minimum=1))

    def sweeps(self) -> int:
        return self.sweeps_per_sample


@register
class PerturbedGibbsReset(_PerturbedGibbs):
    """PeGS.rs (Park & Ghosh §3.4, spec §1.6): B sweeps per seed, each kept; a (table, key)
    visited by a chain is uniform for the rest of its block; α = 1/expm1(ε′·B/M)."""

    name = "pegs_rs"

    def __init__(self, m: int = 1, n_out: int | None = None, B: int = 10, head_size: int = 2,
                 tail_hash: str = "splitmix_parity", structure: str = "given", orders=None,
                 public_part: str = "public", hash_seed: int = 0, pool: str = "original",
                 marginal_alpha: bool = False, l_diversity: float | None = None):
        super().__init__(m, n_out, head_size, tail_hash, structure, orders, public_part,
                         hash_seed, pool, marginal_alpha, l_diversity)
        self.block = int(check_number("B", B, integer=True, minimum=1))
