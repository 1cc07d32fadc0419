"""Private-PGM glue for MST and AIM (:mod:`.pgm`): the estimate step (a graphical model fitted
to noisy marginals by mirror descent, McKenna, Sheldon & Miklau 2019, "Graphical-model based
estimation and inference for differential privacy", ICML, Alg. 1, in the ``mbi`` package) and
the sample step (ancestral sampling of records from the fitted model with the harness's rng).

``mbi`` (JAX) is the optional extra ``pgm``; without it MST and AIM are registered but a
release is a one-line error naming the extra.

Speed and determinism:

* JAX compiles once per worker process: the jitted, vmapped init/step/marginal functions are
  kept at module level (``_BATCHED``, keyed by the mbi domain and the cliques), and JAX's own
  cache serves repeated calls with the same structure; measurement values are traced data,
  so a new replicate or a new ε does not recompile.
* Every fit has one fixed structure per method and schema (every clique MST or AIM may
  measure is a slot; a slot not measured has ~0 weight), so the replicates of a task are one
  vmapped problem (:func:`fit_joint`), each with its own measurements and total, and a task
  compiles nothing after the worker's first.
* The model is read as its dense table over all columns (:class:`JointFit`, schemas of at
  most :data:`JOINT_LIMIT` cells): marginals and i.i.d. sampling are numpy on that table.
  Larger schemas (e.g. 13 columns, 1.0e12 cells) take the junction-tree
  path of :mod:`.pgm_tree` (one replicate at a time, potentials on the measured cliques
  only, ancestral sampling); the synthesizers choose the path from the schema's size.
* Iterations stop by a convergence rule on the model's marginals, not on the loss: blocks of
  50 mirror-descent steps until, for ``patience`` blocks in a row, no clique marginal of any
  replicate's model moved by more than ``tol`` of its total in L1 over the block; at most
  ``max_iters`` steps (:class:`Estimation`, :func:`iterate`).
* JAX on CPU is deterministic for a given program and input, and everything runs in float64
  (``jax.enable_x64`` around the calls): the same inputs give the same bits. The sampler
  draws its uniforms from the harness's rng only (never mbi's sampler, which uses numpy's
  global state).
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..histograms import draw_from_rows
from ..validation import check_number

#: block length of mbi's fused scan (mbi.estimation.CALLBACK_EVERY)
BLOCK = 50


def require_mbi(method: str):
    """The ``mbi`` module, or a one-line error naming the optional extra.

    mbi warns at import that JAX runs in float32 and that JAX's compilation cache is on. Neither
    applies here: every mbi computation of the harness runs inside ``jax.enable_x64(True)``
    (float64), and the cache setting is the user's. The two import-time warnings are silenced so
    that a release does not print a false alarm about its precision."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="JAX is running in float32 mode",
                                    category=UserWarning)
            warnings.filterwarnings("ignore", message="JAX persistent compilation cache",
                                    category=UserWarning)
            import mbi
    except ImportError:
        raise ConfigError(f"synthesizer: {method} needs the optional extra pgm (pip install -e "
                          f"'.[pgm]': mbi, Private-PGM)") from None
    return mbi


@dataclass(frozen=True)
class Estimation:
    """Settings of the estimate step (the stopping rule of :func:`iterate`): mirror descent in
    blocks of :data:`BLOCK` steps, stopped once, for ``patience`` blocks in a row, every
    clique marginal μ_C of every replicate's model moved over the block by at most ``tol`` of
    the model's total N in L1, max_C ‖μ_C − μ_C′‖₁ / N ≤ tol (twice the total-variation
    distance between the model's C-marginals before and after the block); at most
    ``max_iters`` steps whatever the marginals do.

    Why the marginals and not the loss: the loss ½‖(μ − y)/σ‖² is in units of the noise
    variance, so a rule on its relative change depends on σ. Where the measurements are
    consistent (the one-way model, whose optimum loss is ~0) the loss falls geometrically and
    its relative change per block stays large long after the marginals stopped moving; at
    small σ (in the benchmark: σ of 0.16–1.5 counts on 200,000 records) the
    loss keeps falling by ~10 % per 100 steps after 3,000 steps while the cells it still
    corrects are the smallest ones (the exponential family's curvature at a cell is its
    count), so a relative rule on it (tol 1e-5) never stopped before ``max_iters``. The
    marginals are what the release is drawn from, and their change is on the scale of the
    data (a share of the records), whatever σ is.

    Soundness (tests/harness/synthesizers/test_pgm_stopping.py): on a small domain the
    early-stopped model's one- and two-way marginals are within ``10 tol`` of the total (L1)
    of a 20,000-step fit's, on both paths; a ``tol`` of 0.05 (a planted too-loose rule)
    misses that bound."""

    max_iters: int = 1000
    tol: float = 1e-4
    patience: int = 2

    @classmethod
    def checked(cls, max_iters, tol, patience=2) -> Estimation:
        return cls(int(check_number("max_iters", max_iters, integer=True, minimum=BLOCK)),
                   float(check_number("tol", tol, open_interval=(0, 1))),
                   int(check_number("patience", patience, integer=True, minimum=1)))


def column_names(d: int) -> tuple[str, ...]:
    return tuple(f"x{j}" for j in range(d))


def mbi_domain(cards):
    mbi = require_mbi("MST/AIM")
    return mbi.Domain(column_names(len(cards)), tuple(int(c) for c in cards))


#: largest full cross-table (cells) the dense path handles (8 MB of float64)
JOINT_LIMIT = 2 ** 20

#: the noise SD of a slot a replicate did not measure (loss weight 1/σ² = 1e-24)
UNMEASURED = 1e12

_BATCHED: dict = {}
_STRUCTURES: dict = {}


def _structure(domain, slots):
    """mbi's loss structure of the slots (its static part) and, per slot, the maximal clique
    it is routed to and |C|/|c| (for the Lipschitz constant), built once per worker."""
    key = (domain, slots)
    if key not in _STRUCTURES:
        import jax.numpy as jnp
        from mbi import LinearMeasurement
        from mbi.clique_utils import clique_mapping
        from mbi.marginal_loss import from_linear_measurements

        names = column_names(len(domain.shape))
        cliques = [tuple(names[a] for a in c) for c in slots]
        template = [LinearMeasurement(jnp.zeros(domain.size(c)), c) for c in cliques]
        loss = from_linear_measurements(template, domain)
        routing = clique_mapping(loss.cliques, cliques, domain)
        block = np.array([loss.cliques.index(routing[c]) for c in cliques])
        ratio = np.array([domain.size(routing[c]) / domain.size(c) for c in cliques])
        _STRUCTURES[key] = (loss, template, block, ratio)
    return _STRUCTURES[key]


def batched_loss(domain, slots, values, sigmas):
    """The l2 loss of R replicates as one mbi ``MarginalLossFn`` with a leading replicate axis
    on its data (noisy counts, noise SDs, Lipschitz constant), and each replicate's estimated
    total: the same quantities as mbi's ``from_linear_measurements`` (Lipschitz bound from the
    metadata, exact for identity queries) and ``minimum_variance_unbiased_total``, computed
    for all replicates at once."""
    import jax.numpy as jnp
    from mbi import LinearMeasurement
    from mbi.marginal_loss import MarginalLossFn

    loss0, template, block, ratio = _structure(domain, tuple(slots))
    sd = np.maximum(sigmas, 1e-12)
    per_slot = ratio / sd ** 2  # (R, K)
    blocks = np.zeros((sd.shape[0], block.max() + 1))
    np.add.at(blocks.T, block, per_slot.T)
    lipschitz = blocks.max(axis=1)
    sums = np.stack([v.sum(axis=1) for v in values], axis=1)  # (R, K)
    weight = 1.0 / (sd ** 2 * np.array([v.shape[1] for v in values]))
    totals = np.maximum(1.0, (weight * sums).sum(axis=1) / weight.sum(axis=1))
    data = tuple(LinearMeasurement(jnp.asarray(values[k]), m.clique,
                                   stddev=jnp.asarray(sigmas[:, k]), query=m.query)
                 for k, m in enumerate(template))
    return (MarginalLossFn(loss0.cliques, loss0.loss_fn, data, jnp.asarray(lipschitz)),
            jnp.asarray(totals))


def _batched_functions(domain, cliques):
    """(init, warm init, step) for a batch of problems of one structure, jitted and vmapped
    once per worker and kept (the compile-once cache)."""
    key = (domain, tuple(cliques))
    if key not in _BATCHED:
        import jax
        from mbi.estimation import MirrorDescent

        est = MirrorDescent()

        def init(loss, total):
            return est._init(domain, loss, total)

        def warm_init(loss, total, potentials):
            return est._init(domain, loss, total, warm_start=potentials)

        def step(state, loss, total):
            return est._multi_step(state, loss, total)

        _BATCHED[key] = (jax.jit(jax.vmap(init)), jax.jit(jax.vmap(warm_init)),
                         jax.jit(jax.vmap(step)))
    return _BATCHED[key]


def iterate(step, state, settings: Estimation, marginals):
    """Blocks of :data:`BLOCK` mirror-descent steps (``step``: state → state) under the rule of
    :class:`Estimation`: ``marginals`` (state → list of (R, C) arrays, the model's clique
    marginals as shares of each replicate's total); stop when max over cliques of the L1
    change over a block is at most ``tol`` in every replicate for ``patience`` blocks in a
    row, or after ``max_iters`` steps. Returns the final state and the steps taken."""
    previous = marginals(state)
    stalls, steps = 0, 0
    while steps < settings.max_iters:
        state = step(state)
        steps += BLOCK
        current = marginals(state)
        moved = np.max([np.abs(c - p).sum(axis=1) for c, p in zip(current, previous,
                                                                   strict=True)], axis=0)
        stalls = stalls + 1 if np.all(moved <= settings.tol) else 0
        previous = current
        if stalls >= settings.patience:
            break
    return state, steps


@dataclass
class JointFit:
    """Fitted models of R replicates as dense tables: ``joint`` (R, *cards) of counts (the
    model's marginal over all columns, summing to its estimated total), the mbi
    ``potentials`` (a batched CliqueVector, for warm starts) and the steps taken."""

    joint: np.ndarray
    potentials: object
    steps: int

    def marginal(self, clique: tuple[int, ...]) -> np.ndarray:
        """Counts (R, C) of the model's marginal over ``clique`` (sorted column indices),
        cells in row-major order."""
        others = tuple(a + 1 for a in range(self.joint.ndim - 1) if a not in clique)
        return self.joint.sum(axis=others).reshape(self.joint.shape[0], -1)

    def sample(self, n: int, rng: np.random.Generator, draws: int = 1) -> np.ndarray:
        """``draws`` sets of n records (R, draws, n, d) (:func:`sample_joint`)."""
        return sample_joint(self.joint, n, rng, draws)


def fit_joint(cards, slots: tuple[tuple[int, ...], ...], values: list[np.ndarray],
              sigmas: np.ndarray, settings: Estimation, warm=None) -> JointFit:
    """Fit R models to noisy marginals, all R as one vmapped mirror-descent problem whose
    structure is fixed by ``slots`` (sorted column tuples): ``values[k]`` (R, C_k) is the
    noisy counts of slot k and ``sigmas`` (R, K) their noise SD, with ``UNMEASURED`` for a
    slot a replicate did not measure (its loss weight 1/σ² is ~0, so its potentials stay at
    their start and the fit is that of the measured slots; every fit of one structure reuses
    one compiled program whatever was measured). ``warm``: a previous fit's potentials.
    Stops by the convergence rule of ``settings``."""
    import jax

    domain = mbi_domain(cards)
    names = column_names(len(cards))
    r = sigmas.shape[0]
    with jax.enable_x64(True):
        loss, totals = batched_loss(domain, slots, values, sigmas)
        init, warm_init, step = _batched_functions(domain, loss.cliques)
        state = init(loss, totals) if warm is None else warm_init(loss, totals, warm)
        shares = np.asarray(totals)[:, None]

        def marginals(st):
            return [np.asarray(st.mu[c].values).reshape(r, -1) / shares for c in st.mu.cliques]

        state, steps = iterate(lambda st: step(st, loss, totals), state, settings, marginals)
        potentials = state.potentials
        log_joint = np.zeros((r, *[int(c) for c in cards]))
        for clique in potentials.cliques:
            factor = potentials[clique]
            axes = [names.index(a) for a in factor.domain.attributes]
            values_c = np.asarray(factor.values, dtype=float)  # (R, *clique shape)
            shape = [r] + [1] * len(cards)
            for pos, a in enumerate(axes):
                shape[a + 1] = values_c.shape[pos + 1]
            order = [0] + [1 + axes.index(a) for a in sorted(axes)]
            log_joint += np.transpose(values_c, order).reshape(shape)
    log_joint -= log_joint.reshape(r, -1).max(axis=1).reshape((r,) + (1,) * len(cards))
    joint = np.exp(log_joint)
    joint *= (np.asarray(totals) / joint.reshape(r, -1).sum(axis=1)).reshape(
        (r,) + (1,) * len(cards))
    return JointFit(joint, potentials, steps)




def sample_joint(joint: np.ndarray, n: int, rng: np.random.Generator,
                 draws: int = 1) -> np.ndarray:
    """``draws`` sets of n records (R, draws, n, d) drawn i.i.d. from each replicate's model
    (its joint table normalised; uniforms from ``rng``)."""
    r = joint.shape[0]
    probs = np.maximum(joint.reshape(r, -1), 0.0)
    rows = np.broadcast_to(np.arange(r)[:, None, None], (r, draws, n))
    cells = draw_from_rows(probs, rows, rng)
    return np.stack(np.unravel_index(cells, joint.shape[1:]), axis=-1)


def model_size_mb(cards, cliques) -> float:
    """Size in MB of the junction tree of ``cliques`` (column tuples; AIM's model-size
    limit, mbi's hypothetical_model_size), kept per worker (AIM asks the same sizes in every
    release of a schema)."""
    return _model_size_mb(tuple(int(c) for c in cards), frozenset(tuple(c) for c in cliques))


@functools.lru_cache(maxsize=4096)
def _model_size_mb(cards: tuple[int, ...], cliques: frozenset) -> float:
    from mbi import junction_tree

    names = column_names(len(cards))
    return float(junction_tree.hypothetical_model_size(
        mbi_domain(cards), [tuple(names[a] for a in c) for c in sorted(cliques)]))


def clique_counts(codes: np.ndarray, columns: tuple[int, ...], cards) -> np.ndarray:
    """Counts (R, C) of the cross-table of ``columns`` in every replicate of ``codes``
    (R, n, p), cells in row-major order (last column fastest)."""
    r, n, _ = codes.shape
    code = np.zeros((r, n), dtype=np.int64)
    for c in columns:
        code = code * int(cards[c]) + codes[..., c]
    width = int(math.prod(int(cards[c]) for c in columns))
    flat = (code + np.arange(r, dtype=np.int64)[:, None] * width).ravel()
    return np.bincount(flat, minlength=r * width).reshape(r, width).astype(float)
