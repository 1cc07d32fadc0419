"""Shared conformance suite of the synthesizers (DESIGN §10; spec 000 §1–§4.1).

Every registered synthesizer is built from ``ROSTER`` and checked for: release shapes and
domains, reproducibility under a fixed seed, the privacy ledger (total = claimed ε, one entry
per released set with the right budget and noise scale), rejection of invalid budgets, and the
notebook entry point ``synthesize()``. Then each family's formula from Bowen & Liu §4.1 is
checked against a hand computation or a Monte Carlo mean within 4 standard errors. The privacy
audit of the releases is in ``test_privacy_release_audit.py``.
"""

import math

import numpy as np
import pytest

from harness.data import CountBatch
from harness.errors import ConfigError
from harness.models import BetaBinomial
from harness.synthesizers import REGISTRY, Release, make_synthesizer

N = 40
N1 = np.array([0, 1, 10, 20, 39, 40])  # several replicates, including both edges
A = B = 1 / 3  # the Kerman neutral prior of Simulation 1
EPSILONS = [math.exp(-4), 1.0, math.exp(4)]

# name -> (constructor parameters, private?). Every synthesizer of the harness must appear here
# (a paper's own synthesizer, registered by its study, is checked in that paper's tests).
ROSTER = {
    "ori": ({}, False),
    "ms": ({"model": BetaBinomial(A, B), "m": 5}, False),
    "laplace_sanitizer": ({"m": 5}, True),
    "modips": ({"model": BetaBinomial(A, B), "m": 5}, True),
    "multinomial_dirichlet": ({"m": 5}, True),
    "bb_mcclure_reiter": ({"m": 1}, True),
    # numeric synthesizers (Simulation 2): checked on numeric records in the section below
    "perturbed_histogram": ({"lower": -3.0, "upper": 4.0, "m": 5}, True),
    "smoothed_histogram": ({"lower": -3.0, "upper": 4.0}, True),
    # LAP on cells + histograms within cells (Simulation 3): numeric and mixed-data sections below
    "cell_histogram": ({"lower": -3.0, "upper": 4.0, "m": 5}, True),
    # releases a classifier, not data (case study benchmark): checked in its own section below
    "private_svm": ({"m": 1}, True),
    # perturbed Gibbs samplers of coded multivariate records (privacy parameter epsilon_sample):
    # release, ledger, reproducibility and privacy are checked in test_pegs.py and
    # tests/harness/privacy/test_pegs_privacy.py
    "pegs": ({}, True),
    "pegs_rs": ({"B": 10}, True),
    # records drawn with replacement: checked with the numeric synthesizers below
    "bootstrap": ({}, False),
    # coded categorical records with a schema (input_kind "coded"): checked in test_pmi.py
    "pmi": ({"n_out": 20}, True),
    # PrivBayes on coded categorical records: ledger, audits, reproducibility and bad input are
    # checked in test_privbayes.py
    "privbayes": ({"m": 2}, True),
    # distribution-invariant privatization and its record-noise competitors (input kind
    # "records": numeric records whose released n may differ from the original's): release,
    # ledger, reproducibility and privacy are checked in test_dip.py, test_record_noise.py and
    # tests/harness/privacy/test_dip_audit.py
    "dip": ({}, True),
    "lrm": ({}, True),
    "opm": ({}, True),
    "exm": ({}, True),
    # the private logistic GLM (releases a model; input kind "records"): checked in
    # tests/harness/synthesizers/test_private_glm.py and test_dip_audit.py
    "opm_glm": ({"response": -1}, True),
    # survey records with weights and strata (privacy parameter lipschitz_bound for fbs and
    # fbp; a statistics release for laplace_tables): checked in test_pseudo_posterior.py and
    # test_laplace_tables.py
    "fbs": ({}, True),
    "fbp": ({}, True),
    "laplace_tables": ({}, True),
    # tree histograms of coded records with a schema (input kind "coded"): release, ledger,
    # reproducibility and errors are checked in test_steps.py and test_tree_histogram.py, the
    # privacy audit in tests/harness/privacy/test_steps_privacy.py
    "flat_laplace": ({}, True),
    "uh_mod": ({"depth": 2}, True),
    "steps": ({"order": ["a"]}, True),
    # the benchmark's adapter of any coded-records synthesizer to a study's data (input kind
    # "study"): checked in tests/harness/benchmark/test_benchmark_interface.py
    "tabular": ({"inner": {"synthesizer": "privbayes"}}, True),
    # MST and AIM on coded categorical records (input kind "coded", zCDP at a stated δ; the
    # optional extra pgm): release, ledger, relations, m modes and reproducibility are checked
    # in test_pgm.py (skipped without mbi), the reference comparison with OpenDP in
    # test_pgm_reference.py and the privacy audit in tests/harness/privacy/test_pgm_audit.py
    "mst": ({}, True),
    "aim": ({}, True),
}
#: synthesizers of categorical data (the tests up to the numeric section); ori and ms take either
CATEGORICAL = sorted(n for n in ROSTER
                     if getattr(REGISTRY.get(n), "input_kind", "") not in ("numeric", "labelled",
                                                                            "mixed", "coded",
                                                                            "records",
                                                                            "survey", "study"))
PRIVATE = sorted(name for name, (_, private) in ROSTER.items() if private and name in CATEGORICAL)
NON_PRIVATE = sorted(n for n, (_, private) in ROSTER.items() if not private and n in CATEGORICAL)


def build(name, **overrides):
    if name not in ROSTER:
        pytest.fail(f"synthesizer {name!r} is registered but not in the conformance ROSTER")
    params, _ = ROSTER[name]
    return make_synthesizer(name, **{**params, **overrides})


def is_private(name) -> bool:
    return ROSTER[name][1]


def binary_batch(n1=N1, n=N, reps=1) -> CountBatch:
    n1 = np.tile(np.asarray(n1), reps)
    return CountBatch(np.stack([n - n1, n1], axis=-1), n)


def release(name, epsilon, seed=0, data=None, **overrides) -> Release:
    synth = build(name, **overrides)
    eps = epsilon if is_private(name) else None
    return synth.release(binary_batch() if data is None else data, eps, np.random.default_rng(seed))


def test_roster_covers_the_registry():
    harness_synthesizers = {n for n, cls in REGISTRY.items()
                            if cls.__module__.startswith("harness.")}
    assert harness_synthesizers == set(ROSTER)
    for name, (_, private) in ROSTER.items():
        assert REGISTRY[name].private is private


# --- shapes, domains, reproducibility ------------------------------------------------------------


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", CATEGORICAL)
def test_release_shapes_and_domains(name, epsilon):
    synth = build(name)
    data = binary_batch()
    rel = release(name, epsilon, seed=1, data=data)
    counts = rel.sets.counts
    assert isinstance(rel, Release)
    assert counts.shape == (len(N1), synth.m, 2)
    assert rel.m == synth.m
    assert np.issubdtype(counts.dtype, np.integer), counts.dtype
    assert np.all(counts.sum(axis=-1) == N)
    assert np.all((counts >= 0) & (counts <= N))
    assert rel.sets.n == N and rel.sets.levels == data.levels
    assert rel.epsilon == (epsilon if is_private(name) else None)
    for key, value in rel.diagnostics.items():
        assert value.shape[0] == len(N1), key


def test_ori_releases_the_data():
    rel = release("ori", None)
    assert np.array_equal(rel.sets.counts[:, 0], binary_batch().counts)


@pytest.mark.parametrize("name", CATEGORICAL)
def test_reproducible_under_a_fixed_seed(name):
    first = release(name, 1.0, seed=123)
    again = release(name, 1.0, seed=123)
    other = release(name, 1.0, seed=124)
    assert np.array_equal(first.sets.counts, again.sets.counts)
    assert first.ledger.entries == again.ledger.entries
    if name == "ori":
        assert np.array_equal(first.sets.counts, other.sets.counts)  # deterministic
    else:
        assert not np.array_equal(first.sets.counts, other.sets.counts)


# --- privacy ledger and budget validation ----------------------------------------------------


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", CATEGORICAL)
def test_ledger_total_equals_claimed_epsilon(name, epsilon):
    rel = release(name, epsilon)
    if not is_private(name):
        assert rel.ledger.entries == [] and len(rel.ledger) == 0
        assert rel.ledger.total_epsilon() == 0.0
        return
    assert rel.ledger.total_epsilon() == pytest.approx(epsilon, rel=1e-12, abs=0.0)
    m = rel.m
    # one mechanism per released set (sequential composition of the m sets), each at ε/m
    assert len(rel.ledger.entries) == m
    assert [e.statistic.split(":")[0] for e in rel.ledger.entries] == [
        f"set {j + 1}" for j in range(m)
    ]
    for entry in rel.ledger.entries:
        assert entry.parallel_group is None
        assert entry.epsilon == pytest.approx(epsilon / m, rel=1e-12)
        if name in ("laplace_sanitizer", "modips"):
            assert entry.sensitivity == 1.0
            assert entry.scale == pytest.approx(1.0 * m / epsilon, rel=1e-12)


@pytest.mark.parametrize("sensitivity", [0.5, 2.0])
def test_laplace_sanitizer_ledger_scale_follows_sensitivity(sensitivity):
    rel = release("laplace_sanitizer", 2.0, sensitivity=sensitivity, m=4)
    assert [e.scale for e in rel.ledger.entries] == pytest.approx([sensitivity * 4 / 2.0] * 4)
    assert {e.sensitivity for e in rel.ledger.entries} == {sensitivity}


@pytest.mark.parametrize("epsilon", [None, 0, 0.0, -1.0, math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("name", PRIVATE)
def test_private_synthesizers_reject_invalid_epsilon(name, epsilon):
    synth = build(name)
    with pytest.raises(ConfigError, match="epsilon"):
        synth.release(binary_batch(), epsilon, np.random.default_rng(0))


@pytest.mark.parametrize("epsilon", [1.0, 0.0, math.inf])
@pytest.mark.parametrize("name", NON_PRIVATE)
def test_non_private_synthesizers_reject_a_budget(name, epsilon):
    synth = build(name)
    with pytest.raises(ConfigError, match="epsilon"):
        synth.release(binary_batch(), epsilon, np.random.default_rng(0))


@pytest.mark.parametrize("name", CATEGORICAL)
def test_invalid_m_is_a_config_error(name):
    with pytest.raises(ConfigError, match="m"):
        build(name, m=0)


# --- notebook entry point --------------------------------------------------------------------


@pytest.mark.parametrize("name", CATEGORICAL)
def test_synthesize_on_ordinary_records(name):
    records = [1] * 10 + [0] * (N - 10)
    synth = build(name)
    eps = 1.0 if is_private(name) else None
    sets = synth.synthesize(records, eps, seed=7)
    assert isinstance(sets, list) and len(sets) == synth.m
    for s in sets:
        assert isinstance(s, np.ndarray) and s.shape == (N,)
        assert set(np.unique(s).tolist()) <= {0, 1}
    again = synth.synthesize(records, eps, seed=7)
    assert all(np.array_equal(x, y) for x, y in zip(sets, again, strict=True))
    if name == "ori":
        assert sorted(sets[0].tolist()) == sorted(records)


# --- Laplace sanitizer (spec 000 §2.1) -------------------------------------------------------


@pytest.mark.parametrize("allocation", ["largest_remainder", "multinomial"])
@pytest.mark.parametrize("public_total", [False, True])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_laplace_sanitizer_on_a_four_cell_table(public_total, allocation, epsilon):
    table = np.array([[5, 10, 15, 10], [0, 0, 40, 0], [40, 0, 0, 0], [1, 2, 3, 34]])
    data = CountBatch(table, N, levels=("a", "b", "c", "d"))
    synth = make_synthesizer(
        "laplace_sanitizer", m=3, public_total=public_total, allocation=allocation
    )
    rel = synth.release(data, epsilon, np.random.default_rng(11))
    counts = rel.sets.counts
    assert counts.shape == (4, 3, 4) and np.issubdtype(counts.dtype, np.integer)
    assert np.all(counts.sum(axis=-1) == N)
    assert np.all((counts >= 0) & (counts <= N))
    assert rel.sets.levels == ("a", "b", "c", "d")
    # one vector query per set over disjoint cells: ε/m each, total ε
    assert len(rel.ledger.entries) == 3
    assert rel.ledger.total_epsilon() == pytest.approx(epsilon, rel=1e-12)


def test_laplace_sanitizer_is_nearly_exact_at_large_epsilon():
    table = np.array([[5, 10, 15, 10], [1, 2, 3, 34]])
    data = CountBatch(table, N, levels=(0, 1, 2, 3))
    for public_total in (False, True):
        synth = make_synthesizer("laplace_sanitizer", m=5, public_total=public_total)
        rel = synth.release(data, 1e4, np.random.default_rng(3))
        assert np.array_equal(rel.sets.counts, np.repeat(table[:, None], 5, axis=1))


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("m", [1, 5])
def test_laplace_sanitizer_k2_is_round_of_clamped_noisy_count(m, epsilon):
    """Largest-remainder allocation of (n − n₁*, n₁*) is round(n₁*) (spec §2.1, §4.1): redo the
    noise by hand with the same seed (set j draws Lap(0, m/ε) for all replicates in turn)."""
    data = binary_batch(reps=50)
    seed = 2024
    rel = make_synthesizer("laplace_sanitizer", m=m).release(
        data, epsilon, np.random.default_rng(seed)
    )
    rng = np.random.default_rng(seed)
    n1 = data.counts[:, 1].astype(float)
    expected = []
    for _ in range(m):
        noisy = np.clip(n1 + rng.laplace(0.0, m / epsilon, size=(n1.size, 1))[:, 0], 0, N)
        expected.append(np.floor(noisy + 0.5))  # round half up: ties have probability zero
    expected = np.stack(expected, axis=1).astype(np.int64)
    assert np.array_equal(rel.sets.counts[..., 1], expected)
    assert np.array_equal(rel.sets.counts[..., 0], N - expected)


# --- prior-based synthesizers (spec 000 §2.4, §2.5) -----------------------------------------


def mean_within(values, target, k=4.0):
    values = np.asarray(values, dtype=float).ravel()
    se = values.std(ddof=1) / math.sqrt(values.size)
    assert abs(values.mean() - target) <= k * se, (values.mean(), target, se)


@pytest.mark.parametrize("epsilon", [1.0, math.exp(2)])
@pytest.mark.parametrize("n1", [0, 10])
def test_bb_mcclure_reiter_success_probability(n1, epsilon):
    """p* = (n₁ + α*)/(n + 2α*), α* = (e^{ε/n} − 1)⁻¹, full ε, one Binomial(n, p*) set and no
    posterior draw (so the synthetic count has the binomial variance n p*(1 − p*))."""
    reps = 100_000
    rel = make_synthesizer("bb_mcclure_reiter").release(
        binary_batch([n1], reps=reps), epsilon, np.random.default_rng(5)
    )
    alpha = 1.0 / math.expm1(epsilon / N)
    p_star = (n1 + alpha) / (N + 2 * alpha)
    ones = rel.sets.counts[:, 0, 1]
    mean_within(ones, N * p_star)
    assert ones.var() == pytest.approx(N * p_star * (1 - p_star), rel=0.03)


@pytest.mark.parametrize("epsilon", [1.0, math.exp(2)])
@pytest.mark.parametrize("n1", [0, 10])
def test_multinomial_dirichlet_mean_and_overdispersion(n1, epsilon):
    """p* ~ Beta(α* + n₁, α* + n − n₁) with α* = n/(e^{ε/m} − 1): E[p*] = (n₁+α*)/(n+2α*), and
    the synthetic count is beta-binomial (variance inflated by the posterior draw)."""
    m = 5
    reps = 40_000
    rel = make_synthesizer("multinomial_dirichlet", m=m).release(
        binary_batch([n1], reps=reps), epsilon, np.random.default_rng(6)
    )
    alpha = N / math.expm1(epsilon / m)
    p = (n1 + alpha) / (N + 2 * alpha)
    p_hat = rel.sets.counts[..., 1] / N
    mean_within(p_hat, p)
    # beta-binomial: Var(ñ₁) = n p (1 − p) (1 + (n − 1)/(n + 2α* + 1))
    var = N * p * (1 - p) * (1 + (N - 1) / (N + 2 * alpha + 1))
    assert (p_hat * N).var() == pytest.approx(var, rel=0.03)


# --- model-based synthesizers (spec 000 §2.6, §2.7, §4.1) -----------------------------------


class RecordingModel:
    """Delegates to a model and records the (sanitized) statistics MODIPS hands to the posterior."""

    def __init__(self, model):
        self.model = model
        self.seen: list[np.ndarray] = []

    def sufficient_statistics(self, data):
        return self.model.sufficient_statistics(data)

    def posterior_draw(self, stats, data, rng):
        self.seen.append(np.array(stats["n1"], dtype=float, copy=True))
        return self.model.posterior_draw(stats, data, rng)

    def predictive_draw(self, theta, data, rng):
        return self.model.predictive_draw(theta, data, rng)


def modips_statistics(bounds, postprocess, epsilon, seed=8):
    model = RecordingModel(BetaBinomial(A, B, bounds=bounds))
    synth = make_synthesizer("modips", model=model, m=5, postprocess=postprocess)
    rel = synth.release(binary_batch(reps=500), epsilon, np.random.default_rng(seed))
    assert len(model.seen) == 5  # one sanitization, posterior and predictive draw per set
    return np.stack(model.seen, axis=1), rel


def test_reviewer_bounds_of_the_beta_binomial_statistic():
    (stat,) = BetaBinomial(A, 0.5, bounds="reviewer").sufficient_statistics(binary_batch())
    assert stat.lower == pytest.approx(-A) and np.all(stat.upper == pytest.approx(0.5 + N))
    (nat,) = BetaBinomial(A, B).sufficient_statistics(binary_batch())
    assert (nat.lower, nat.upper) == (0.0, float(N))


@pytest.mark.parametrize("bounds", ["natural", "reviewer"])
def test_modips_clamp_keeps_n1_star_inside_bounds_with_atoms(bounds):
    lo, hi = (0.0, N) if bounds == "natural" else (-A, B + N)
    stats, rel = modips_statistics(bounds, "clamp", epsilon=math.exp(-1))
    assert np.all((stats >= lo) & (stats <= hi))
    # at small ε the Laplace noise (scale 5/ε ≈ 13.6) often leaves the range: BIT atoms
    assert np.isclose(stats, lo).any() and np.isclose(stats, hi).any()
    counts = rel.sets.counts
    assert np.all(counts.sum(axis=-1) == N) and np.all((counts >= 0) & (counts <= N))
    if bounds == "reviewer":
        # n₁* = −a gives Beta(0, ·), the point mass at π = 0: a set of zeros
        at_lower = np.isclose(stats, lo)
        assert np.all(counts[..., 1][at_lower] == 0)
        assert np.all(counts[..., 0][np.isclose(stats, hi)] == 0)


@pytest.mark.parametrize("bounds", ["natural", "reviewer"])
def test_modips_redraw_has_no_clamped_atoms(bounds):
    lo, hi = (0.0, N) if bounds == "natural" else (-A, B + N)
    stats, rel = modips_statistics(bounds, "redraw", epsilon=math.exp(-1))
    assert np.all((stats > lo) & (stats < hi))
    assert {e.mechanism for e in rel.ledger.entries} == {"laplace_truncated_by_redraw"}
    assert rel.ledger.total_epsilon() == pytest.approx(math.exp(-1), rel=1e-12)


def test_modips_noise_is_fresh_per_set_and_centred():
    stats, _ = modips_statistics("natural", "clamp", epsilon=math.exp(4), seed=9)
    n1 = np.tile(N1, 500)
    # ε = e⁴, scale 5/ε ≈ 0.09: n₁* tracks n₁, with distinct noise in every set
    assert np.abs(stats - n1[:, None]).max() < 2.0
    inner = (n1 > 0) & (n1 < N)
    assert np.unique(stats[inner], axis=None).size == stats[inner].size


def test_ms_posterior_predictive_mean():
    """MS: π_j ~ Beta(a + n₁, b + n − n₁), ñ_j ~ Bin(n, π_j): E[p̂] = (a + n₁)/(a + b + n)."""
    n1 = 10
    rel = make_synthesizer("ms", model=BetaBinomial(A, B), m=5).release(
        binary_batch([n1], reps=40_000), None, np.random.default_rng(10)
    )
    p_hat = rel.sets.counts[..., 1] / N
    mean_within(p_hat, (A + n1) / (A + B + N))
    a_post, b_post = A + n1, B + N - n1
    p = a_post / (a_post + b_post)
    var = N * p * (1 - p) * (1 + (N - 1) / (a_post + b_post + 1))
    assert (p_hat * N).var() == pytest.approx(var, rel=0.03)


@pytest.mark.parametrize("n1", [0, 10])
def test_modips_is_ms_at_large_epsilon(n1):
    """With ε → ∞ the sanitized n₁* equals n₁ and MODIPS reduces to MS (spec §2.6–§2.7)."""
    rel = make_synthesizer("modips", model=BetaBinomial(A, B), m=5).release(
        binary_batch([n1], reps=40_000), 1e6, np.random.default_rng(12)
    )
    mean_within(rel.sets.counts[..., 1] / N, (A + n1) / (A + B + N))


# --- numeric synthesizers (Bowen & Liu §4.2; spec 000 §2.2, §2.3, §4.2) ----------------------
# The same checks on numeric records: a RecordBatch of R data sets of n = 40 values clamped to the
# public bounds [−3, 4] (Simulation 2, σ = 1, asymmetric bounds). MODIPS and MS run with the
# normal / inverse-gamma model; ori releases the records as they are.

from harness.data import RecordBatch  # noqa: E402
from harness.models import NormalInverseGamma  # noqa: E402

LO, HI = -3.0, 4.0
NUMERIC = {  # label -> (registered name, parameters, private?)
    "ori": ("ori", {}, False),
    "ms-normal": ("ms", {"model": NormalInverseGamma(LO, HI), "m": 5}, False),
    "modips-normal": ("modips", {"model": NormalInverseGamma(LO, HI), "m": 5}, True),
    "perturbed_histogram": ("perturbed_histogram", ROSTER["perturbed_histogram"][0], True),
    "smoothed_histogram": ("smoothed_histogram", ROSTER["smoothed_histogram"][0], True),
    "cell_histogram": ("cell_histogram", ROSTER["cell_histogram"][0], True),
    "bootstrap": ("bootstrap", {}, False),
}


def numeric_batch(reps=6, n=N, seed=0) -> RecordBatch:
    rng = np.random.default_rng(seed)
    return RecordBatch(np.clip(rng.normal(0.0, 1.0, (reps, n, 1)), LO, HI))


def numeric_release(label, epsilon, seed=0, data=None, **overrides) -> Release:
    name, params, private = NUMERIC[label]
    synth = make_synthesizer(name, **{**params, **overrides})
    data = numeric_batch() if data is None else data
    return synth.release(data, epsilon if private else None, np.random.default_rng(seed))


def test_numeric_roster_covers_the_numeric_synthesizers():
    numeric = {n for n, cls in REGISTRY.items() if cls.input_kind == "numeric"}
    assert numeric <= {name for name, _, _ in NUMERIC.values()}


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("label", sorted(NUMERIC))
def test_numeric_release_shapes_and_domains(label, epsilon):
    data = numeric_batch()
    rel = numeric_release(label, epsilon, seed=1, data=data)
    name, params, private = NUMERIC[label]
    m = params.get("m", 1)
    assert isinstance(rel.sets, RecordBatch)
    assert rel.sets.values.shape == (6, m, N, 1) and rel.m == m
    assert np.all(np.isfinite(rel.sets.values))
    assert np.all((rel.sets.values >= LO) & (rel.sets.values <= HI))
    assert rel.epsilon == (epsilon if private else None)
    for key, value in rel.diagnostics.items():
        assert value.shape[0] == 6, key
    if label == "ori":
        assert np.array_equal(rel.sets.values[:, 0], data.values)


@pytest.mark.parametrize("label", sorted(NUMERIC))
def test_numeric_reproducible_under_a_fixed_seed(label):
    first, again = numeric_release(label, 1.0, seed=5), numeric_release(label, 1.0, seed=5)
    other = numeric_release(label, 1.0, seed=6)
    assert np.array_equal(first.sets.values, again.sets.values)
    assert first.ledger.entries == again.ledger.entries
    if label != "ori":
        assert not np.array_equal(first.sets.values, other.sets.values)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("label", sorted(NUMERIC))
def test_numeric_ledger_total_equals_claimed_epsilon(label, epsilon):
    rel = numeric_release(label, epsilon)
    name, params, private = NUMERIC[label]
    if not private:
        assert rel.ledger.entries == []
        return
    m = rel.m
    assert rel.ledger.total_epsilon() == pytest.approx(epsilon, rel=1e-12)
    entries = rel.ledger.entries
    if label == "modips-normal":
        # x̄ and S² per set, each with half of ε/m; Δ = 7/n and 49/n (Bowen & Liu §4.2)
        assert len(entries) == 2 * m
        for entry, (stat, delta) in zip(entries, [("mean", 7 / N), ("variance", 49 / N)] * m,
                                        strict=True):
            assert entry.statistic.endswith(stat)
            assert entry.epsilon == pytest.approx(epsilon / (2 * m), rel=1e-12)
            assert entry.sensitivity == pytest.approx(delta)
            assert entry.scale == pytest.approx(delta * 2 * m / epsilon)
    elif label == "perturbed_histogram":
        # one vector query over disjoint bins per set: Δ = 1 (the paper's), scale m/ε
        assert len(entries) == m
        assert all(e.sensitivity == 1.0 and e.scale == pytest.approx(m / epsilon)
                   and e.epsilon == pytest.approx(epsilon / m) for e in entries)
    elif label == "cell_histogram":
        # per set: the cell counts and the bins of all cells, each with half of ε/m, Δ = 1
        assert len(entries) == 2 * m
        assert [e.statistic.split(": ")[1] for e in entries[:2]] == [
            "cell counts", "bin counts of all cells"]
        assert all(e.sensitivity == 1.0 and e.epsilon == pytest.approx(epsilon / (2 * m))
                   and e.scale == pytest.approx(2 * m / epsilon) for e in entries)
    else:  # smoothed histogram: λ of Eq. 7 with the whole ε, one set
        assert [e.mechanism for e in entries] == ["smoothed_histogram_weight"]
        assert entries[0].epsilon == pytest.approx(epsilon)


@pytest.mark.parametrize("epsilon", [None, 0.0, -1.0, math.inf, math.nan])
@pytest.mark.parametrize("label", [k for k, v in NUMERIC.items() if v[2]])
def test_numeric_private_synthesizers_reject_invalid_epsilon(label, epsilon):
    name, params, _ = NUMERIC[label]
    with pytest.raises(ConfigError, match="epsilon"):
        make_synthesizer(name, **params).release(numeric_batch(), epsilon,
                                                 np.random.default_rng(0))


@pytest.mark.parametrize("label", sorted(NUMERIC))
def test_numeric_synthesize_on_ordinary_records(label):
    name, params, private = NUMERIC[label]
    records = np.clip(np.random.default_rng(3).normal(size=N), LO, HI)
    synth = make_synthesizer(name, **params)
    if synth.input_kind != "numeric":  # ori and ms: pass a ready RecordBatch
        records = RecordBatch.from_records(records)
    sets = synth.synthesize(records, 1.0 if private else None, seed=7)
    assert len(sets) == synth.m
    for frame in sets:
        assert frame.shape == (N, 1)
        assert frame.to_numpy().min() >= LO and frame.to_numpy().max() <= HI


def test_histogram_synthesizers_reject_bad_settings():
    with pytest.raises(ConfigError, match="upper"):
        make_synthesizer("perturbed_histogram", lower=1.0, upper=0.0)
    with pytest.raises(ConfigError, match="sd_source"):
        make_synthesizer("smoothed_histogram", lower=0.0, upper=1.0, sd_source="median")
    with pytest.raises(ConfigError, match="sensitivity"):
        make_synthesizer("perturbed_histogram", lower=0.0, upper=1.0, sensitivity=0)
    with pytest.raises(ConfigError, match="m"):
        make_synthesizer("smoothed_histogram", lower=0.0, upper=1.0, m=0)


def _bin_shares(values, lo, hi, k):
    idx = np.clip(np.floor((values[..., 0] - lo) / (hi - lo) * k), 0, k - 1).astype(int)
    return np.stack([(idx == j).mean(axis=-1) for j in range(k)], axis=-1)


def test_perturbed_histogram_reproduces_the_histogram_at_large_epsilon():
    """Eq. 5: with ε → ∞ the sanitized counts equal the counts, so the synthetic bin shares are
    multinomial around p̂_k, and records are uniform within their bins."""
    data = numeric_batch(reps=1, n=1000, seed=4)
    synth = make_synthesizer("perturbed_histogram", lower=LO, upper=HI, m=5)
    k = int(synth.bin_grid(data).total[0, 0])
    reps = 400
    big = RecordBatch(np.repeat(data.values, reps, axis=0))
    rel = synth.release(big, 1e9, np.random.default_rng(8))
    p_hat = _bin_shares(data.values, LO, HI, k)[0]
    shares = _bin_shares(rel.sets.values, LO, HI, k).reshape(-1, k)
    se = np.sqrt(p_hat * (1 - p_hat) / 1000 / shares.shape[0])
    assert np.all(np.abs(shares.mean(axis=0) - p_hat) <= 4 * se + 1e-12)
    assert rel.diagnostics["bins"].tolist() == [k] * reps


def test_smoothed_histogram_mixes_with_the_uniform():
    """Eq. 6: the expected synthetic bin share is (1 − λ)p̂_k + λ/K with λ of Eq. 7."""
    data = numeric_batch(reps=1, n=40, seed=9)
    synth = make_synthesizer("smoothed_histogram", lower=LO, upper=HI)
    k = int(synth.bin_grid(data).total[0, 0])
    eps = 2.0
    lam = k / (k + 40 * math.expm1(eps / 40))
    rel = synth.release(RecordBatch(np.repeat(data.values, 20_000, axis=0)), eps,
                        np.random.default_rng(10))
    assert rel.diagnostics["lambda"][:, 0] == pytest.approx(lam)
    p_hat = _bin_shares(data.values, LO, HI, k)[0]
    expected = (1 - lam) * p_hat + lam / k
    shares = _bin_shares(rel.sets.values, LO, HI, k)[:, 0]
    se = np.sqrt(expected * (1 - expected) / 40 / shares.shape[0])
    assert np.all(np.abs(shares.mean(axis=0) - expected) <= 4 * se)


def test_public_sd_makes_the_bin_count_data_independent():
    a, b = numeric_batch(reps=3, seed=1), numeric_batch(reps=3, seed=2)
    fixed = make_synthesizer("perturbed_histogram", lower=LO, upper=HI, public_sd=1.0)
    assert np.array_equal(fixed.bin_grid(a).total, fixed.bin_grid(b).total)
    # K = ceil(7 / (3.5 · 1 · 40^(−1/3))) = ceil(2 · 40^(1/3)) = 7
    assert fixed.bin_grid(a).total.ravel().tolist() == [7, 7, 7]


def test_histogram_synthesizers_on_grouped_two_dimensional_records():
    """G = 3 groups of 2-D records with per-group boxes: one histogram per group (Scott's
    2-D rule), synthetic records keep their group and stay inside their group's box."""
    rng = np.random.default_rng(11)
    reps, n = 4, 300
    cells = rng.integers(0, 3, size=(reps, n))
    centres = np.array([[-5.0, 0.0], [0.0, 0.0], [5.0, 5.0]])
    x = centres[cells] + rng.normal(size=(reps, n, 2))
    lower, upper = centres - 4.0, centres + 4.0
    x = np.clip(x, lower[cells], upper[cells])
    data = RecordBatch(x, cells, 3)
    for name in ("perturbed_histogram", "smoothed_histogram"):
        synth = make_synthesizer(name, lower=lower, upper=upper)
        rel = synth.release(data, 2.0, np.random.default_rng(12))
        v = rel.sets.values
        assert v.shape == (reps, synth.m, n, 2)
        assert np.array_equal(rel.sets.cells, np.repeat(cells[:, None], synth.m, axis=1))
        box_lo, box_hi = lower[rel.sets.cells], upper[rel.sets.cells]
        assert np.all((v >= box_lo) & (v <= box_hi))
        assert rel.ledger.total_epsilon() == pytest.approx(2.0)
        assert np.all(rel.diagnostics["bins"] > 1)


@pytest.mark.parametrize("seed", [13])
def test_modips_normal_is_ms_at_large_epsilon(seed):
    """As ε → ∞ the sanitized (x̄*, S²*) equal (x̄, S²) and MODIPS reduces to MS (§4.2)."""
    data = RecordBatch(np.repeat(numeric_batch(reps=1, seed=seed).values, 20_000, axis=0))
    model = NormalInverseGamma(LO, HI)
    a = make_synthesizer("modips", model=model).release(data, 1e9, np.random.default_rng(1))
    b = make_synthesizer("ms", model=model).release(data, None, np.random.default_rng(2))
    ma, mb = a.sets.values.mean(axis=(2, 3)).ravel(), b.sets.values.mean(axis=(2, 3)).ravel()
    se = np.hypot(ma.std(), mb.std()) / math.sqrt(ma.size)
    assert abs(ma.mean() - mb.mean()) <= 4 * se
    va, vb = a.sets.values.var(axis=2).ravel(), b.sets.values.var(axis=2).ravel()
    assert va.mean() == pytest.approx(vb.mean(), rel=0.02)


# --- PrivateSVM (Rubinstein et al. 2009, Alg. 2): releases noisy linear-SVM weights ------------


def labelled_batch(reps=4, n=N, seed=0) -> RecordBatch:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 3))
    y = (x @ [1.0, -0.5, 0.2] + rng.normal(0, 0.3, n) > 0).astype(float)
    return RecordBatch(np.repeat(np.column_stack([x, y])[None], reps, axis=0))


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_private_svm_ledger_shapes_and_reproducibility(epsilon):
    pytest.importorskip("sklearn")
    synth = build("private_svm")
    data = labelled_batch()
    rel = synth.release(data, epsilon, np.random.default_rng(3))
    again = synth.release(data, epsilon, np.random.default_rng(3))
    assert rel.sets.weights.shape == (4, 1, 3) and rel.m == 1
    assert np.array_equal(rel.sets.weights, again.sets.weights)
    assert np.all(rel.sets.intercept == 0)  # no bias term (Rubinstein et al.'s f(x) = <w, x>)
    assert rel.ledger.total_epsilon() == pytest.approx(epsilon, rel=1e-12)
    (entry,) = rel.ledger.entries
    delta = 4 * 1 * 1 * 9 * math.sqrt(3) / N  # 4LCκ√F/n with the defaults κ = 9, C = L = 1
    assert entry.sensitivity == pytest.approx(delta)
    assert entry.scale == pytest.approx(delta / epsilon)
    # the noise is Laplace around the same fitted weights in every replicate
    spread = rel.sets.weights[:, 0] - rel.sets.weights[:, 0].mean(axis=0)
    assert np.all(np.isfinite(spread))


# --- mixed data: cells × numeric variables (Bowen & Liu §4.3.1; spec 000 §4.3) -----------------
# A RecordBatch of R data sets with K = 4 cells and two numeric variables clamped to per-cell
# boxes. MS and MODIPS run with the general location model; cell_histogram is NP-DIPS.

from harness.models import GeneralLocationModel  # noqa: E402
from harness.models.glom import cells_from_counts  # noqa: E402

GLOM_LOWER = np.array([[-4.0, -4.0], [-2.0, -5.0], [-6.0, -3.0], [-4.0, 0.0]])
GLOM_UPPER = GLOM_LOWER + 8.0
N_MIXED = 120
MIXED = {  # label -> (registered name, parameters, private?)
    "ori": ("ori", {}, False),
    "ms-glom": ("ms", {"model": GeneralLocationModel(GLOM_LOWER, GLOM_UPPER), "m": 5}, False),
    "modips-glom": ("modips", {"model": GeneralLocationModel(GLOM_LOWER, GLOM_UPPER), "m": 5},
                    True),
    "modips-glom-sanitized-n": (
        "modips", {"model": GeneralLocationModel(GLOM_LOWER, GLOM_UPPER, cell_counts="sanitized"),
                   "m": 5}, True),
    "cell_histogram": ("cell_histogram", {"lower": GLOM_LOWER, "upper": GLOM_UPPER, "m": 5},
                       True),
}


def mixed_batch(reps=6, seed=0) -> RecordBatch:
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(N_MIXED, [0.1, 0.2, 0.3, 0.4], size=reps)
    cells = cells_from_counts(counts)
    centre = (GLOM_LOWER + GLOM_UPPER) / 2
    z = np.clip(centre[cells] + rng.standard_normal((reps, N_MIXED, 2)), GLOM_LOWER[cells],
                GLOM_UPPER[cells])
    return RecordBatch(z, cells, 4, ("z1", "z2"))


def mixed_release(label, epsilon, seed=0, data=None) -> Release:
    name, params, private = MIXED[label]
    data = mixed_batch() if data is None else data
    synth = make_synthesizer(name, **params)
    return synth.release(data, epsilon if private else None, np.random.default_rng(seed))


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("label", sorted(MIXED))
def test_mixed_release_shapes_and_domains(label, epsilon):
    data = mixed_batch()
    rel = mixed_release(label, epsilon, seed=1, data=data)
    m = MIXED[label][1].get("m", 1)
    sets = rel.sets
    assert isinstance(sets, RecordBatch) and sets.n_cells == 4
    assert sets.values.shape == (6, m, N_MIXED, 2) and sets.cells.shape == (6, m, N_MIXED)
    assert np.all((sets.cells >= 0) & (sets.cells < 4))
    assert np.all(sets.cell_counts().sum(axis=-1) == N_MIXED)
    lo, hi = GLOM_LOWER[sets.cells], GLOM_UPPER[sets.cells]
    assert np.all((sets.values >= lo) & (sets.values <= hi))  # clamped to each record's box
    for key, value in rel.diagnostics.items():
        assert value.shape[0] == 6, key
    if label == "ori":
        assert np.array_equal(sets.values[:, 0], data.values)


@pytest.mark.parametrize("label", sorted(MIXED))
def test_mixed_reproducible_under_a_fixed_seed(label):
    first, again = mixed_release(label, 1.0, seed=5), mixed_release(label, 1.0, seed=5)
    other = mixed_release(label, 1.0, seed=6)
    assert np.array_equal(first.sets.values, again.sets.values)
    assert np.array_equal(first.sets.cells, again.sets.cells)
    assert [e.statistic for e in first.ledger.entries] == [
        e.statistic for e in again.ledger.entries]
    if label != "ori":
        assert not np.array_equal(first.sets.values, other.sets.values)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("label", sorted(MIXED))
def test_mixed_ledger_total_equals_claimed_epsilon(label, epsilon):
    rel = mixed_release(label, epsilon)
    name, params, private = MIXED[label]
    if not private:
        assert rel.ledger.entries == []
        return
    m = rel.m
    entries = rel.ledger.entries
    assert rel.ledger.total_epsilon() == pytest.approx(epsilon, rel=1e-12)
    if name == "modips":
        # counts, z̄_·1, z̄_·2, S11, S22, S12: 1/6 of ε/m each (Bowen & Liu §4.3.1: ε/30)
        assert len(entries) == 6 * m
        assert all(e.epsilon == pytest.approx(epsilon / (6 * m)) for e in entries)
        names = [e.statistic.split(": ")[1] for e in entries[:6]]
        assert names == ["counts", "mean_1", "mean_2", "S11", "S22", "S12"]
        # z̄_kj: per-cell sensitivity 8/n_k, recorded once per set with its range
        assert "per-element sensitivity" in entries[1].note
        s = entries[3].sensitivity
        assert s == pytest.approx(64 * (N_MIXED - 1) / (N_MIXED * (N_MIXED - 4)))
    else:
        assert len(entries) == 2 * m
        assert all(e.epsilon == pytest.approx(epsilon / (2 * m)) for e in entries)


@pytest.mark.parametrize("label", [k for k, v in MIXED.items() if v[2]])
def test_mixed_private_synthesizers_reject_invalid_epsilon(label):
    name, params, _ = MIXED[label]
    for epsilon in (None, 0.0, math.inf):
        with pytest.raises(ConfigError, match="epsilon"):
            make_synthesizer(name, **params).release(mixed_batch(), epsilon,
                                                     np.random.default_rng(0))


@pytest.mark.parametrize("label", sorted(MIXED))
def test_mixed_synthesize_on_ordinary_records(label):
    name, params, private = MIXED[label]
    frame = mixed_batch(reps=1).to_records((0,))
    data = RecordBatch.from_records(frame, cell_column="cell", n_cells=4)
    sets = make_synthesizer(name, **params).synthesize(data, 1.0 if private else None, seed=7)
    assert len(sets) == params.get("m", 1)
    for out in sets:
        assert list(out.columns) == ["cell", "z1", "z2"] and len(out) == N_MIXED


def test_cell_histogram_reproduces_cells_and_bins_at_large_epsilon():
    """ε → ∞: the synthetic cell counts equal the original ones and each record falls in a bin
    that holds original records (NP-DIPS, spec §4.3)."""
    data = mixed_batch(reps=3)
    _, params, _ = MIXED["cell_histogram"]
    synth = make_synthesizer("cell_histogram", **params)
    rel = synth.release(data, 1e7, np.random.default_rng(8))
    assert np.array_equal(rel.sets.cell_counts(), np.repeat(data.cell_counts()[:, None], 5, 1))
    grid = synth.bin_grid(data, data.cell_counts(), synth.scott_sd_of(data))
    orig = grid.counts(data.values, data.cells)
    for j in range(5):
        syn = grid.counts(rel.sets.values[:, j], rel.sets.cells[:, j])
        assert np.all(orig[syn > 0] > 0)
    bins = rel.diagnostics["bins_cell_01"]
    assert bins.shape == (3, 5) and np.all(bins == grid.total[:, :1])
