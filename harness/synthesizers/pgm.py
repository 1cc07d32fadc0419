"""MST (McKenna, Miklau & Sheldon 2021, "Winning the NIST contest: a scalable and general
approach to differentially private synthetic data", JPC 11(3), §4, Alg. 1) and AIM (McKenna,
Mullins, Sheldon & Miklau 2022, "AIM: an adaptive and iterative mechanism for differentially
private synthetic data", PVLDB 15(11), §4, Alg. 2) on coded categorical records, each as
select → measure → estimate → sample.

Privacy (zCDP, :mod:`harness.privacy.zcdp`). The privacy parameter is ε at a stated δ
(``delta``, default 1e-5): a release spends the largest ρ whose (ε, δ) conversion is at most ε
(``zcdp_rho``), the ledger records ρ per Gaussian measurement (ρ = Δ₂²/(2σ²)) and per
exponential-mechanism selection (ρ = ε²/8), composed by summation and converted back to
(ε, δ) at δ. Sensitivities (``relation``): a marginal's counts change by one record under
``add/remove`` (Δ₂ = Δ₁ = 1) and by one count down and one up under ``substitution``
(Δ₂ = √2, Δ₁ = 2); the selection scores are L1 errors of marginals, so their sensitivity is
the marginal's Δ₁ (times AIM's largest workload weight). The noise is drawn from the
harness's seeded rng (``gaussian_zcdp``, ``exponential_zcdp``), so a release is bit-identical
on re-run.

MST (paper §4, with the paper's split by default: ρ/3 one-way, ρ/3 select, ρ/3 measure;
``oneway_split`` and ``measure_split`` give OpenDP's 0.5 and 0.9):
  1. measure every one-way marginal (ρ₁/d each);
  2. estimate the independent model from them; select d − 1 pairs by the exponential
     mechanism (ρ_sel/(d − 1) each) with score ‖x_ab − x̂_ab‖₁, each time among the pairs that
     join two components (a maximum spanning tree, Kruskal-like);
  3. measure the selected two-way marginals (ρ_meas/(d − 1) each);
  4. estimate the model on all measurements (mirror descent, :mod:`.pgm_model`) and sample.
  Domain compression (paper §4; the authors' ``mechanisms/mst.py``, ``compress_domain``):
  after step 1 the levels of each column whose noisy count is below 3σ are merged into one
  level, steps 2–4 run on the compressed domain and sampled merged levels are spread
  uniformly over their original levels (:mod:`.pgm_compress`; post-processing of the
  one-way measurements, no extra ρ). It is done on the junction-tree path (``compress``,
  default on), where the domain is large; the dense path (≤ ``dense_cells``) keeps its
  vmapped fit over the uncompressed domain, whose replicates would otherwise each have their
  own domain. OpenDP's ``opendp.extras.mbi`` MST does not compress: with public keys every
  key is kept (plus a null key); without them its one-way release drops keys below a
  threshold into null.

AIM (paper Alg. 2): the workload is every ``degree``-way marginal with weight 1, the
candidates its downward closure with weight w_c = Σ_{r ∈ W} |c ∩ r|. With T = ``rounds``
(default 16d) and α = ``measure_split`` (0.9), σ = √(T/(2αρ)) and ε = √(8(1 − α)ρ/T);
one-way marginals are measured with σ, then each round selects the candidate maximising
w_c(‖x_c − x̂_c‖₁ − √(2/π)σ|c|) among those keeping the model within
``max_model_size`` × (ρ used)/ρ MB, measures it, refits, and halves σ (doubles ε) when the
model's marginal moved by less than √(2/π)σ|c|; the last round spends whatever is left.
AIM's rounds depend on the data, so each replicate runs its own loop with its own ledger;
the release ledger records the one-way measurements and, for the rounds, their summed ρ of
measurement and of selection (the same in every replicate, checked), with the range of round
counts in the note.

Large domains: a schema whose full cross-table has more than ``dense_cells`` (default
:data:`MST_DENSE_CELLS` = 2^14 for MST, :data:`.pgm_model.JOINT_LIMIT` = 2^20 for AIM) cells
takes the junction-tree path (:mod:`.pgm_tree`):
the same select and measure steps, the estimate on the measured cliques only, replicate by
replicate, and ancestral sampling; AIM's model-size cap (``max_model_size`` MB, the paper's
JT-SIZE ≤ (ρ_used/ρ)·MAX-SIZE filter on the candidates of each round) then bounds the
junction tree the estimate works on. The ledger is the same as on the dense path.

m synthetic sets (``m_mode``): ``independent``: m releases at ρ/m each (the ledger's entries
carry their set, so the first m' sets compose to their own ε); ``draws``: one fitted model
spends ρ once and the m sets are m draws of n records from it.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..privacy import PrivacyLedger, exponential_zcdp, gaussian_zcdp, zcdp_rho
from ..privacy.ledger import ADD_REMOVE, RELATIONS, SUBSTITUTION, LedgerEntry
from ..privacy.zcdp import gaussian_sigma_zcdp
from ..validation import check_number
from .base import Synthesizer
from .coded import CodedRecordsSynthesize
from .pgm_compress import Compression
from .pgm_model import (
    JOINT_LIMIT,
    UNMEASURED,
    Estimation,
    JointFit,
    clique_counts,
    fit_joint,
    require_mbi,
)
from .pgm_size import candidate_sizes_mb
from .pgm_tree import TreeFit, fit_tree, maximal
from .pmi import categorical_cards
from .privbayes import table_counts
from .registry import register

#: MST's default ``dense_cells``: domains above it take the junction-tree path. Measured on
#: the benchmark's coded domains (one replicate per release, loaded 2-core machine): the dense
#: vmapped fit costs ~ cells × pairs per step, so at 57,600–131,072 cells it took 14–65 s per
#: release against 0.45–2.1 s on the tree (four studies' domains: docs/guide.md); the
#: domains of at most 2,400 cells that the committed benchmark runs stay dense (AIM keeps
#: :data:`.pgm_model.JOINT_LIMIT`: its tree path refits per round and was not measured there)
MST_DENSE_CELLS = 2 ** 14
M_MODES = ("independent", "draws")
AIM_FINAL_ROUNDS = ("paper", "clip")
DEFAULT_ESTIMATION = Estimation()


def sensitivities(relation: str) -> tuple[float, float]:
    """(Δ₂, Δ₁) of a table of counts under the neighbour relation."""
    return (1.0, 1.0) if relation == ADD_REMOVE else (math.sqrt(2.0), 2.0)


def _set_slot(values, sigmas, slot, replicate, noisy, sigma) -> None:
    """Put a replicate's noisy counts of one slot; a slot measured before is combined with
    the new measurement by inverse-variance weighting (the same l2 loss up to a constant)."""
    old = sigmas[replicate, slot]
    if old >= UNMEASURED:
        values[slot][replicate], sigmas[replicate, slot] = noisy, sigma
        return
    w_old, w_new = old ** -2, sigma ** -2
    values[slot][replicate] = (values[slot][replicate] * w_old + noisy * w_new) / (w_old + w_new)
    sigmas[replicate, slot] = (w_old + w_new) ** -0.5


def empty_slots(slots, cards, r: int):
    """Zero values and UNMEASURED noise SDs for R replicates' slots."""
    values = [np.zeros((r, math.prod(int(cards[a]) for a in c))) for c in slots]
    return values, np.full((r, len(slots)), UNMEASURED)


# --- MST ---------------------------------------------------------------------------------------


def mst_slots(d: int) -> tuple[tuple[int, ...], ...]:
    """Every clique MST may measure: the one-way marginals and every pair."""
    return tuple((j,) for j in range(d)) + tuple(combinations(range(d), 2))


def mst_measure_oneway(codes, cards, rho, relation, rng, ledger, values, sigmas, label=""):
    """Step 1: every one-way marginal with Gaussian noise of ρ/d each (into slots 0..d−1)."""
    l2, _ = sensitivities(relation)
    d = len(cards)
    sigma = gaussian_sigma_zcdp(rho / d, l2)
    for j in range(d):
        values[j] = gaussian_zcdp(clique_counts(codes, (j,), cards), l2_sensitivity=l2,
                                  rho=rho / d, rng=rng, ledger=ledger,
                                  statistic=f"{label}one-way marginal of column {j}")
        sigmas[:, j] = sigma


def mst_select(codes, cards, oneway: JointFit, rho, relation, rng, ledger, label=""):
    """Step 2: d − 1 pairs per replicate by the exponential mechanism (ρ/(d − 1) each), each
    time among the pairs joining two components of the tree so far, with score the L1 error
    ‖x_ab − x̂_ab‖₁ of the one-way model's two-way marginal. Returns edges (R, d − 1, 2)."""
    _, l1 = sensitivities(relation)
    r, _, d = codes.shape
    pairs = list(combinations(range(d), 2))
    scores = np.stack([np.abs(clique_counts(codes, p, cards) - oneway.marginal(p)).sum(axis=1)
                       for p in pairs], axis=1)
    component = np.tile(np.arange(d), (r, 1))
    first = np.array([a for a, _ in pairs])
    second = np.array([b for _, b in pairs])
    edges = np.empty((r, d - 1, 2), dtype=np.int64)
    rows = np.arange(r)
    for step in range(d - 1):
        joined = component[:, first] == component[:, second]
        pick = exponential_zcdp(np.where(joined, -np.inf, scores), sensitivity=l1,
                                rho=rho / (d - 1), rng=rng, ledger=ledger,
                                statistic=f"{label}selection {step + 1} of {d - 1}: a pair "
                                          f"joining two components, by its L1 error")
        a, b = first[pick], second[pick]
        edges[:, step] = np.stack([a, b], axis=1)
        old, new = component[rows, b], component[rows, a]
        component = np.where(component == old[:, None], new[:, None], component)
    return edges


def mst_measure_pairs(codes, cards, edges, rho, relation, rng, ledger, values, sigmas,
                      label=""):
    """Step 3: the selected two-way marginals (ρ/(d − 1) each), into their slots (each
    replicate's pair counts in one bincount, padded to the largest table)."""
    l2, _ = sensitivities(relation)
    k = edges.shape[1]
    slot_of = {c: i for i, c in enumerate(mst_slots(len(cards)))}
    sigma = gaussian_sigma_zcdp(rho / k, l2)
    for step in range(k):
        counts, sizes = table_counts(codes, edges[:, step], np.asarray(cards))
        noisy = gaussian_zcdp(counts, l2_sensitivity=l2, rho=rho / k, rng=rng, ledger=ledger,
                              statistic=f"{label}two-way marginal of selected pair {step + 1} "
                                        f"of {k}")
        for pair in {tuple(int(c) for c in e) for e in edges[:, step]}:
            rows = np.flatnonzero((edges[:, step] == pair).all(axis=1))
            slot = slot_of[pair]
            values[slot][rows] = noisy[rows, :values[slot].shape[1]]
            sigmas[rows, slot] = sigma


def mst_split(rho, d, oneway_split, measure_split) -> tuple[float, float, float]:
    """ρ of the one-way measurements, of the selections and of the two-way measurements."""
    rho1 = oneway_split * rho if d > 1 else rho  # one column: nothing to select or pair
    rho_sel = (1.0 - measure_split) * (rho - rho1)
    return rho1, rho_sel, rho - rho1 - rho_sel


def mst(codes, cards, rho, relation, rng, ledger, *, oneway_split=1 / 3, measure_split=0.5,
        settings=DEFAULT_ESTIMATION, label="", dense=True, compress=True):
    """MST (McKenna et al. 2021, Alg. 1) for R replicates ``codes`` (R, n, d): the fitted
    models, as one vmapped dense fit (``dense``) or on junction trees (:func:`mst_large`)."""
    if not dense:
        return mst_large(codes, cards, rho, relation, rng, ledger, oneway_split=oneway_split,
                         measure_split=measure_split, settings=settings, label=label,
                         compress=compress)
    r, _, d = codes.shape
    slots = mst_slots(d)
    values, sigmas = empty_slots(slots, cards, r)
    rho1, rho_sel, rho_meas = mst_split(rho, d, oneway_split, measure_split)
    mst_measure_oneway(codes, cards, rho1, relation, rng, ledger, values, sigmas, label)
    if d == 1:
        return fit_joint(cards, slots, values, sigmas, settings)
    oneway = fit_joint(cards, slots, values, sigmas, settings)
    edges = mst_select(codes, cards, oneway, rho_sel, relation, rng, ledger, label)
    mst_measure_pairs(codes, cards, edges, rho_meas, relation, rng, ledger, values, sigmas,
                      label)
    return fit_joint(cards, slots, values, sigmas, settings)


def mst_large_one(codes, cards, rho, relation, rng, ledger, *, oneway_split, measure_split,
                  settings, label, compress):
    """MST on one replicate ``codes`` (1, n, d) on the junction-tree path: step 1, then (if
    ``compress``) the paper's domain compression of the noisy one-way marginals
    (:mod:`.pgm_compress`, post-processing), steps 2–4 on the compressed domain. Returns the
    fit and its decoder (None without compression)."""
    d = len(cards)
    slots = mst_slots(d)
    rho1, rho_sel, rho_meas = mst_split(rho, d, oneway_split, measure_split)
    values, sigmas = empty_slots(slots, cards, 1)
    mst_measure_oneway(codes, cards, rho1, relation, rng, ledger, values, sigmas, label)
    scales, decoder = None, None
    if compress:
        comp = Compression.from_oneway([values[j][0] for j in range(d)], float(sigmas[0, 0]))
        oneway, oneway_sd = values[:d], sigmas[:, :d].copy()
        cards, codes, decoder = np.array(comp.cards, dtype=np.int64), comp.encode(codes), \
            comp.decode
        values, sigmas = empty_slots(slots, cards, 1)
        scales = {}
        for j in range(d):
            compressed, scale = comp.oneway(j, oneway[j][0])
            values[j][0], sigmas[0, j], scales[j] = compressed, oneway_sd[0, j], scale[None]
    if d > 1:
        model = fit_tree(cards, slots, values, sigmas, settings, scales=scales)
        edges = mst_select(codes, cards, model, rho_sel, relation, rng, ledger, label)
        mst_measure_pairs(codes, cards, edges, rho_meas, relation, rng, ledger, values,
                          sigmas, label)
    return fit_tree(cards, slots, values, sigmas, settings, scales=scales), decoder


def mst_large(codes, cards, rho, relation, rng, ledger, *, oneway_split=1 / 3,
              measure_split=0.5, settings=DEFAULT_ESTIMATION, label="",
              compress=True) -> TreeFit:
    """MST on the junction-tree path (:mod:`.pgm_tree`) for R replicates, one after another
    (each replicate's compressed domain and tree are its own); the release ledger records
    the replicates' common spend once (:func:`record_replicate_ledgers`)."""
    fits, decoders, ledgers = [], [], []
    for i in range(codes.shape[0]):
        own = PrivacyLedger(relation=ledger.relation)
        fit, decoder = mst_large_one(codes[i:i + 1], cards, rho, relation, rng, own,
                                     oneway_split=oneway_split, measure_split=measure_split,
                                     settings=settings, label=label, compress=compress)
        fits.append(fit)
        decoders.append(decoder)
        ledgers.append(own)
    record_replicate_ledgers(ledger, ledgers)
    return TreeFit([f.models[0] for f in fits], tuple(int(c) for c in cards),
                   max(f.steps for f in fits),
                   decoders if compress else None)


def record_replicate_ledgers(ledger, replicate_ledgers: list[PrivacyLedger]) -> None:
    """Record into the release ledger the spend of replicates fitted one at a time, whose
    ledgers hold the same mechanisms with the same ρ in the same order (checked): the first
    replicate's entries (one spend per mechanism, as a batched call records)."""
    first = replicate_ledgers[0]
    for led in replicate_ledgers[1:]:
        if [(e.mechanism, e.rho) for e in led.entries] != [(e.mechanism, e.rho) for e in
                                                           first.entries]:
            raise AssertionError("replicates fitted one at a time spent differently")
    for e in first.entries:
        ledger.record(e)


# --- AIM ---------------------------------------------------------------------------------------


def aim_candidates(d: int, degree: int) -> dict[tuple[int, ...], float]:
    """The downward closure of the workload of all ``degree``-way marginals, each candidate
    with its weight Σ_{r ∈ W} |c ∩ r| (AIM §4.1)."""
    workload = list(combinations(range(d), min(degree, d)))
    closure = {c for w in workload for s in range(1, len(w) + 1) for c in combinations(w, s)}
    return {c: float(sum(len(set(c) & set(w)) for w in workload))
            for c in sorted(closure, key=lambda c: (len(c), c))}


def aim_one(codes, cards, rho, relation, rng, ledger, *, degree=3, rounds=None,
            max_model_size=80.0, measure_split=0.9, oneway_split=None, final_round="paper",
            settings=DEFAULT_ESTIMATION, label="", dense=True):
    """AIM (McKenna et al. 2022, Alg. 2) on one replicate ``codes`` (1, n, d): the fitted
    model (a dense table, or on the junction-tree path unless ``dense``) and the number of
    rounds.

    ``oneway_split`` None: the paper's one-way step (in the first round's budget) and rounds
    of ρ/T; a share s: OpenDP's contingency table (``opendp.extras.mbi.AIM``), the one-way
    marginals on sρ (sρ/d each) before AIM, the rounds of (1 − s)ρ/T on the rest and the
    model-size limit scaled by the rounds' share of it. ``final_round`` ``"paper"``: when
    less than two rounds' ρ is left, the round spends all of it (Alg. 2); ``"clip"``: a
    round spends at most what is left, until nothing is (OpenDP's)."""
    if final_round not in AIM_FINAL_ROUNDS:
        raise allowed("final_round", final_round, AIM_FINAL_ROUNDS)
    fit_model = fit_joint if dense else fit_tree
    l2, l1 = sensitivities(relation)
    d = len(cards)
    big_t = int(rounds or 16 * d)
    candidates = aim_candidates(d, degree)
    slots = tuple(candidates)
    slot_of = {c: i for i, c in enumerate(slots)}
    values, sigmas = empty_slots(slots, cards, 1)
    answers = {c: clique_counts(codes, c, cards)[0] for c in candidates}
    max_weight = max(candidates.values())
    base = 0.0 if oneway_split is None else oneway_split * rho  # ρ spent before the rounds
    rho_round = (rho - base) / big_t
    # Alg. 2's initialisation: σ₀ = √(T/(2αρ)) per one-way marginal, i.e. ρ = 1/(2σ₀²) = αρ/T
    # each (Δ₂ = 1; the reference code's sigma = sqrt(rounds / (2 * 0.9 * rho))); OpenDP: sρ/d
    rho_j = measure_split * rho_round if oneway_split is None else base / d
    if oneway_split is None and d * rho_j >= rho * (1 - 1e-9):
        raise ConfigError(f"rounds: AIM's one-way step spends {d} x measure_split x ρ/T; with "
                          f"{d} columns and measure_split {measure_split} it leaves nothing for "
                          f"the rounds unless rounds > {d * measure_split:g} (got {big_t}; "
                          f"default 16 x columns)")
    used = 0.0
    measured: list[tuple[int, ...]] = []
    for j in range(d):
        noisy = gaussian_zcdp(answers[(j,)], l2_sensitivity=l2, rho=rho_j, rng=rng,
                              ledger=ledger, statistic=f"{label}one-way marginal of column {j}")
        _set_slot(values, sigmas, slot_of[(j,)], 0, noisy, gaussian_sigma_zcdp(rho_j, l2))
        measured.append((j,))
        used += rho_j
    fit = fit_model(cards, slots, values, sigmas, settings)
    rho_meas, rho_sel = measure_split * rho_round, (1 - measure_split) * rho_round
    sizes: dict[tuple, float] = {}
    t, done = 0, False
    while not done:
        t += 1
        if final_round == "clip":
            last = rho - used <= (rho_meas + rho_sel) * (1 + 1e-9)
        else:
            last = rho - used < 2.0 * (rho_meas + rho_sel)
        if last:  # the last round spends what is left
            remaining = rho - used
            rho_meas = measure_split * remaining
            rho_sel = remaining - rho_meas
            done = True
        used += rho_meas + rho_sel
        sigma = gaussian_sigma_zcdp(rho_meas, l2)
        limit = max_model_size * (used - base) / (rho - base)
        small = aim_small(cards, measured, candidates, limit, sizes)
        small = small or [c for c in candidates if len(c) == 1]
        bias = math.sqrt(2 / math.pi) * sigma
        scores = np.array([candidates[c] * (np.abs(answers[c] - fit.marginal(c)[0]).sum()
                                            - bias * answers[c].size) for c in small])
        pick = int(exponential_zcdp(scores, sensitivity=l1 * max_weight, rho=rho_sel, rng=rng,
                                    ledger=ledger, statistic=f"{label}round {t}: selection"))
        chosen = small[pick]
        noisy = gaussian_zcdp(answers[chosen], l2_sensitivity=l2, rho=rho_meas, rng=rng,
                              ledger=ledger, statistic=f"{label}round {t}: measurement")
        before = fit.marginal(chosen)[0]
        _set_slot(values, sigmas, slot_of[chosen], 0, noisy, sigma)
        measured.append(chosen)
        fit = fit_model(cards, slots, values, sigmas, settings, warm=fit.potentials)
        after = fit.marginal(chosen)[0]
        if not done and np.abs(after - before).sum() <= bias * answers[chosen].size:
            rho_meas, rho_sel = 4.0 * rho_meas, 4.0 * rho_sel  # σ/2, ε×2
    return fit, t


def aim_small(cards, measured, candidates, limit, sizes: dict) -> list[tuple[int, ...]]:
    """The candidates c whose model ``measured`` ∪ {c} keeps its junction tree within
    ``limit`` MB (Alg. 2's JT-SIZE filter, mbi's ``hypothetical_model_size``). The junction
    tree depends on the maximal cliques only, so ``sizes`` (kept across rounds) holds one
    size per such set; a candidate inside a measured clique leaves the model as it is. The
    sizes not yet known are computed together (:func:`.pgm_size.candidate_sizes_mb`)."""
    tops = frozenset(maximal(measured))
    keys = {c: tops if any(set(c) <= set(m) for m in tops) else frozenset(
        {m for m in tops if not set(m) <= set(c)} | {c}) for c in candidates}
    todo = {}
    for c, key in keys.items():
        if key not in sizes:
            todo.setdefault(key, c)
    if todo:
        base = list(set(measured))
        for key, size in zip(todo, candidate_sizes_mb(cards, base, list(todo.values())),
                             strict=True):
            sizes[key] = size
    return [c for c in candidates if sizes[keys[c]] <= limit]


def record_aim_ledgers(ledger, replicate_ledgers: list[PrivacyLedger], rounds, label=""):
    """The release ledger of AIM's replicates (see the module docstring): the one-way entries
    (the same in every replicate) as they are, the rounds' measurements and selections as
    their summed ρ, which must agree across replicates."""
    def summed(led, mechanism):
        return sum(e.rho for e in led.entries if e.mechanism == mechanism and "round" in
                   e.statistic)

    first = replicate_ledgers[0]
    for e in first.entries:
        if "round" not in e.statistic:
            ledger.record(e)
    note = f"{min(rounds)}–{max(rounds)} rounds over the replicates"
    for mechanism, what in (("gaussian_zcdp", "measurements"), ("exponential_zcdp",
                                                                 "selections")):
        totals = [summed(led, mechanism) for led in replicate_ledgers]
        if max(totals) - min(totals) > 1e-12 * max(totals):
            raise AssertionError(f"AIM replicates spent different ρ on {what}: {totals}")
        sample = next(e for e in first.entries if e.mechanism == mechanism and "round" in
                      e.statistic)
        ledger.record(LedgerEntry(f"{label}AIM rounds: {what}", mechanism, 0.0,
                                  sample.sensitivity, None, None, note, rho=float(totals[0])))


# --- the synthesizers --------------------------------------------------------------------------


class _PGMSynthesizer(CodedRecordsSynthesize, Synthesizer):
    """Shared parts of MST and AIM: ε at δ → ρ, the relation, m sets in two modes, the
    sample step, the choice of path (dense up to ``dense_cells`` cells in the full
    cross-table, junction tree above)."""

    input_kind = "coded"

    def __init__(self, m: int = 1, delta: float = 1e-5, relation: str = ADD_REMOVE,
                 m_mode: str = "independent", max_iters: int = 1000, tol: float = Estimation.tol,
                 dense_cells: int = JOINT_LIMIT):
        super().__init__(m)
        self.dense_cells = int(check_number("dense_cells", dense_cells, integer=True,
                                            minimum=0))
        self.delta = float(check_number("delta", delta, open_interval=(0, 1)))
        if relation not in RELATIONS:
            raise allowed("relation", relation, RELATIONS)
        self.relation = relation
        if m_mode not in M_MODES:
            raise allowed("m_mode", m_mode, M_MODES)
        self.m_mode = m_mode
        self.settings = Estimation.checked(max_iters, tol)

    #: calibrated natively under both relations (Δ₂ and the score sensitivity follow the
    #: relation), so ``study.relation`` never needs group privacy here
    relations = RELATIONS

    @property
    def neighbour_relation(self) -> str:  # per instance: the relation parameter
        return self.relation

    @neighbour_relation.setter
    def neighbour_relation(self, relation: str) -> None:  # Synthesizer.calibrate sets it
        if relation not in RELATIONS:
            raise allowed("relation", relation, RELATIONS)
        self.relation = relation

    @property
    def target_delta(self) -> float:  # study.delta (Synthesizer.calibrate) is this δ
        return self.delta

    @target_delta.setter
    def target_delta(self, delta: float) -> None:
        self.delta = float(check_number("study.delta", delta, open_interval=(0, 1)))

    def _fit(self, codes, cards, rho, ledger, rng, label, dense) -> JointFit | TreeFit:
        """The fitted models of the R replicates (dense tables, or junction trees unless
        ``dense``)."""
        raise NotImplementedError

    def _release(self, data, epsilon, ledger, rng):
        require_mbi(self.name)
        cards = np.array(categorical_cards(data, self.name), dtype=np.int64)
        if data.n < 1:
            raise ConfigError(f"data: {self.name} needs at least 1 record")
        codes = data.values.astype(np.int64)
        r, n, d = codes.shape
        ledger.zcdp_delta = self.delta
        rho = zcdp_rho(epsilon, self.delta)
        dense = math.prod(int(c) for c in cards) <= self.dense_cells
        if self.m_mode == "draws":
            fit = self._fit(codes, cards, rho, ledger, rng, "", dense)
            sets = fit.sample(n, rng, draws=self.m)
        else:
            parts = []
            for j in range(self.m):
                label = f"set {j + 1}: " if self.m > 1 else ""
                fit = self._fit(codes, cards, rho / self.m, ledger.for_set(j), rng, label,
                                dense)
                parts.append(fit.sample(n, rng)[:, 0])
            sets = np.stack(parts, axis=1)
        out = RecordBatch(sets.astype(data.values.dtype), None, 1, data.columns, None, None,
                          data.schema)
        diagnostics = {"pgm_rho": np.full(r, rho)}
        return out, diagnostics


@register
class MST(_PGMSynthesizer):
    """MST (see the module docstring): ``oneway_split`` of ρ on the one-way marginals, of the
    rest ``measure_split`` on the selected two-way marginals and the remainder on selecting
    them (the paper: 1/3 and 1/2; OpenDP: 0.5 and 0.9); ``compress``: the paper's domain
    compression on the junction-tree path, which MST takes above ``dense_cells`` cells
    (default :data:`MST_DENSE_CELLS`)."""

    name = "mst"

    def __init__(self, m: int = 1, delta: float = 1e-5, relation: str = ADD_REMOVE,
                 m_mode: str = "independent", oneway_split: float = 1 / 3,
                 measure_split: float = 0.5, max_iters: int = 1000, tol: float = Estimation.tol,
                 dense_cells: int = MST_DENSE_CELLS, compress: bool = True):
        super().__init__(m, delta, relation, m_mode, max_iters, tol, dense_cells)
        self.compress = bool(compress)
        self.oneway_split = float(check_number("oneway_split", oneway_split,
                                               open_interval=(0, 1)))
        self.measure_split = float(check_number("measure_split", measure_split,
                                                open_interval=(0, 1)))

    def _fit(self, codes, cards, rho, ledger, rng, label, dense):
        return mst(codes, cards, rho, self.relation, rng, ledger,
                   oneway_split=self.oneway_split, measure_split=self.measure_split,
                   settings=self.settings, label=label, dense=dense, compress=self.compress)


@register
class AIM(_PGMSynthesizer):
    """AIM (see the module docstring): workload of all ``degree``-way marginals, ``rounds``
    T (None: 16d), ``max_model_size`` in MB, ``measure_split`` α of each round's ρ."""

    name = "aim"

    def __init__(self, m: int = 1, delta: float = 1e-5, relation: str = ADD_REMOVE,
                 m_mode: str = "independent", degree: int = 3, rounds: int | None = None,
                 max_model_size: float = 80.0, measure_split: float = 0.9,
                 max_iters: int = 1000, tol: float = Estimation.tol,
                 dense_cells: int = JOINT_LIMIT):
        super().__init__(m, delta, relation, m_mode, max_iters, tol, dense_cells)
        self.degree = int(check_number("degree", degree, integer=True, minimum=1))
        self.rounds = None if rounds is None else int(check_number("rounds", rounds,
                                                                   integer=True, minimum=1))
        self.max_model_size = float(check_number("max_model_size", max_model_size,
                                                 open_interval=(0, math.inf)))
        self.measure_split = float(check_number("measure_split", measure_split,
                                                open_interval=(0, 1)))

    def _fit(self, codes, cards, rho, ledger, rng, label, dense):
        fits, rounds, ledgers = [], [], []
        for i in range(codes.shape[0]):
            own = PrivacyLedger(relation=ledger.relation, zcdp_delta=self.delta)
            fit, t = aim_one(codes[i:i + 1], cards, rho, self.relation, rng, own,
                               degree=self.degree, rounds=self.rounds,
                               max_model_size=self.max_model_size,
                               measure_split=self.measure_split, settings=self.settings,
                               label=label, dense=dense)
            fits.append(fit)
            rounds.append(t)
            ledgers.append(own)
        record_aim_ledgers(ledger, ledgers, rounds, label)
        if dense:
            return JointFit(np.stack([f.joint[0] for f in fits]), None, 0)
        return TreeFit([f.models[0] for f in fits], tuple(int(c) for c in cards))


__all__ = ["MST", "AIM", "SUBSTITUTION"]
