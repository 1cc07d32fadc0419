"""Library pieces of Bowen & Liu Simulation 3: inverse-Wishart draws, Laplace noise with
per-element sensitivities, the GLOM model object, the combining rule with dropped sets and the
GLOM estimators (checked against plain per-set numpy loops)."""

import math

import numpy as np
import pytest
from scipy import stats

from harness.data import RecordBatch
from harness.inference import combine
from harness.inference.estimators import (
    correlation_from_covariance,
    glom_cell_means,
    marginal_proportions,
    pooled_within_cell_covariance,
)
from harness.models import GeneralLocationModel, inverse_wishart_draw
from harness.models.glom import cells_from_counts, within_cell_moments
from harness.privacy import PrivacyLedger, laplace_mechanism
from harness.synthesizers import make_synthesizer

# --- inverse Wishart ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "df, scale",
    [
        (20, np.array([[2.0, 0.7], [0.7, 1.5]])),
        (976, 976 * np.array([[1.0, 0.5], [0.5, 1.0]])),  # the Sim 3 posterior: IW(n − K, SSP)
        (25, np.array([[2.0, 0.7, 0.1], [0.7, 1.5, 0.2], [0.1, 0.2, 1.0]])),
    ],
)
def test_inverse_wishart_moments_match_scipy(df, scale):
    draws = 200_000
    x = inverse_wishart_draw(df, np.broadcast_to(scale, (draws, *scale.shape)),
                             np.random.default_rng(1))
    ref = stats.invwishart(df, scale)
    mean, var = ref.mean(), ref.var()
    se = np.sqrt(var / draws)
    z = (x.mean(axis=0) - mean) / se
    print("\nIW mean ours vs scipy:\n", x.mean(axis=0), "\n", mean, "\nmax |z|", np.abs(z).max())
    assert np.abs(z).max() < 4.5
    # variances within 3% (df large enough for finite fourth moments: sampling SE ~1%)
    assert x.var(axis=0) == pytest.approx(var, rel=0.03)
    assert np.allclose(x, np.swapaxes(x, -1, -2))
    assert np.all(np.linalg.eigvalsh(x) > 0)


def test_inverse_wishart_distribution_of_one_entry_matches_scipy():
    """KS test of Σ_11 (marginally inverse gamma) against scipy's own sampler."""
    scale = np.array([[2.0, 0.7], [0.7, 1.5]])
    ours = inverse_wishart_draw(8, np.broadcast_to(scale, (20_000, 2, 2)),
                                np.random.default_rng(2))[:, 0, 0]
    ref = stats.invwishart(8, scale).rvs(20_000, random_state=3)[:, 0, 0]
    assert stats.ks_2samp(ours, ref).pvalue > 1e-3


def test_inverse_wishart_per_row_parameters_and_errors():
    scale = np.stack([np.eye(2), 100 * np.eye(2)])
    x = inverse_wishart_draw(np.array([50.0, 50.0]), np.repeat(scale[None], 20_000, 0),
                             np.random.default_rng(4))
    ratio = x[:, 1].mean(axis=0) / x[:, 0].mean(axis=0)
    assert ratio[0, 0] == pytest.approx(100, rel=0.03)
    with pytest.raises(ValueError, match="degrees of freedom"):
        inverse_wishart_draw(0.5, np.eye(2), np.random.default_rng(0))


# --- Laplace with per-element sensitivities -----------------------------------------------------


def test_laplace_mechanism_with_array_sensitivity():
    sens = np.array([[0.1, 1.0, 8.0]])
    ledger = PrivacyLedger()
    x = laplace_mechanism(np.zeros((200_000, 3)), sensitivity=sens, epsilon=0.5,
                          rng=np.random.default_rng(5), ledger=ledger, statistic="cell means")
    # Lap(0, b) has mean absolute deviation b = Δ_i/ε per element
    assert np.abs(x).mean(axis=0) == pytest.approx(sens[0] / 0.5, rel=0.01)
    assert len(ledger) == 1 and ledger.total_epsilon() == 0.5
    entry = ledger.entries[0]
    assert entry.sensitivity == 8.0 and entry.scale == 16.0
    assert "per-element sensitivity in [0.1, 8]" in entry.note
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_mechanism(np.zeros(2), sensitivity=np.array([1.0, 0.0]), epsilon=1.0,
                          rng=np.random.default_rng(0), ledger=PrivacyLedger(), statistic="x")


def test_scalar_sensitivity_noise_is_unchanged():
    """Rows of Sim 1 must not change: Lap(0, 1)·b is bit-identical to Lap(0, b)."""
    a = laplace_mechanism(np.zeros(1000), sensitivity=1.0, epsilon=0.2,
                          rng=np.random.default_rng(6), ledger=PrivacyLedger(), statistic="x")
    b = np.random.default_rng(6).laplace(0.0, 5.0, size=1000)
    # exact on any CPU: numpy draws both from the same uniforms with the same scalar log, and
    # (−log u)·5 and 0 − 5·log u are the same IEEE product
    assert np.array_equal(a, b)


# --- GLOM model object ---------------------------------------------------------------------------

K, P = 4, 2
LOWER = np.array([[-4.0, -4.0], [-3.0, -5.0], [-6.0, -2.0], [-4.0, -4.0]])
UPPER = LOWER + 8.0


def glom_batch(r=3, n=200, seed=0, empty_cell=False):
    rng = np.random.default_rng(seed)
    pi = np.array([0.0, 0.3, 0.3, 0.4]) if empty_cell else np.array([0.1, 0.2, 0.3, 0.4])
    counts = rng.multinomial(n, pi, size=r)
    cells = cells_from_counts(counts)
    centre = (LOWER + UPPER) / 2
    z = centre[cells] + rng.standard_normal((r, n, P)) @ np.array([[1.0, 0.0], [0.5, 0.8]]).T
    z = np.clip(z, LOWER[cells], UPPER[cells])
    return RecordBatch(z, cells, K, ("z1", "z2"))


def test_cells_from_counts_and_within_cell_moments_match_loops():
    data = glom_batch()
    counts, sums, ssp = within_cell_moments(data.values, data.cells, K)
    for r in range(data.n_replicates):
        z, c = data.values[r], data.cells[r]
        for k in range(K):
            assert counts[r, k] == (c == k).sum()
            assert np.allclose(sums[r, k], z[c == k].sum(axis=0))
        expected = sum(
            (z[c == k] - z[c == k].mean(axis=0)).T @ (z[c == k] - z[c == k].mean(axis=0))
            for k in range(K) if (c == k).any()
        )
        assert np.allclose(ssp[r], expected)
    assert np.array_equal(cells_from_counts(np.array([[2, 0, 1]])), [[0, 0, 2]])


def test_glom_statistics_sensitivities_and_bounds():
    data = glom_batch(empty_cell=True)
    model = GeneralLocationModel(LOWER, UPPER)
    stats_ = {s.name: s for s in model.sufficient_statistics(data)}
    assert list(stats_) == ["counts", "mean_1", "mean_2", "S11", "S22", "S12"]
    assert sum(s.budget_share for s in stats_.values()) == pytest.approx(1.0)
    n = data.n
    counts = data.cell_counts()
    # z̄_kj: (c1 − c0)/n_k with n_k floored at 1 (cell 0 is empty: box centre and 8/1)
    assert np.allclose(stats_["mean_1"].sensitivity, 8.0 / np.maximum(counts, 1))
    assert np.allclose(stats_["mean_1"].value[:, 0], (LOWER[0, 0] + UPPER[0, 0]) / 2)
    # S entries: (c1 − c0)²(n − 1)/(n(n − K)) (paper §4.3.1), on S = SSP/(n − K)
    assert stats_["S11"].sensitivity == pytest.approx(64 * (n - 1) / (n * (n - K)))
    _, _, ssp = within_cell_moments(data.values, data.cells, K)
    assert np.allclose(stats_["S12"].value, ssp[:, 0, 1] / (n - K))
    assert stats_["S11"].upper == pytest.approx(16 * n / (n - K))
    assert stats_["S12"].lower == -stats_["S12"].upper


def test_glom_posterior_draw_moments():
    """MS posterior pieces: E[Σ] = SSP/(n − K − 3) (IW(n − K, SSP), d = 2), μ_k − z̄_k has
    covariance E[Σ]/n_k, π has mean (α + n_k)/(Kα + n)."""
    data = glom_batch(r=1, n=200, seed=3)
    model = GeneralLocationModel(LOWER, UPPER)
    stats_ = {s.name: s.value for s in model.sufficient_statistics(data)}
    reps = 40_000
    big = RecordBatch(np.repeat(data.values, reps, 0), np.repeat(data.cells, reps, 0), K)
    tiled = {k: np.repeat(v, reps, 0) for k, v in stats_.items()}
    theta = model.posterior_draw(tiled, big, np.random.default_rng(7))
    _, _, ssp = within_cell_moments(data.values, data.cells, K)
    df = data.n - K
    e_sigma = ssp[0] / (df - 3)
    assert theta["sigma"].mean(axis=0) == pytest.approx(e_sigma, rel=0.01)
    counts = data.cell_counts()[0]
    means = np.stack([stats_["mean_1"][0], stats_["mean_2"][0]], axis=-1)
    dev = theta["mu"] - means
    for k in range(K):
        cov = np.cov(dev[:, k].T)
        assert cov == pytest.approx(e_sigma / counts[k], rel=0.05)
        assert np.abs(dev[:, k].mean(axis=0)).max() < 4 * np.sqrt(e_sigma.max() / counts[k] / reps)
    assert theta["pi"].mean(axis=0) == pytest.approx((0.5 + counts) / (K * 0.5 + data.n),
                                                     abs=0.003)


def test_glom_covariance_postprocessing_makes_positive_definite():
    model = GeneralLocationModel(LOWER, UPPER)
    cov = model._covariance({"S11": np.array([1.0, 1e-9]), "S22": np.array([4.0, 2.0]),
                             "S12": np.array([5.0, -3.0])})
    assert np.all(np.linalg.eigvalsh(cov) > 0)
    assert cov[0, 0, 1] == pytest.approx(0.99 * 2.0)
    assert cov[1, 0, 0] == pytest.approx(1e-6)  # variance floored


def test_glom_predictive_draw_clamps_to_cell_boxes():
    model = GeneralLocationModel(LOWER, UPPER)
    data = glom_batch(r=2, n=500)
    theta = {"pi": np.full((2, K), 0.25), "mu": np.broadcast_to(UPPER, (2, K, P)) + 1,
             "sigma": np.broadcast_to(np.eye(2) * 4, (2, 2, 2))}
    out = model.predictive_draw(theta, data, np.random.default_rng(8))
    lo, hi = LOWER[out.cells], UPPER[out.cells]
    assert np.all((out.values >= lo) & (out.values <= hi))
    assert (out.values == hi).mean() > 0.5  # most draws beyond the box: BIT atoms at the top
    assert out.values.shape == data.values.shape and out.n_cells == K


@pytest.mark.parametrize("cell_counts", ["true", "sanitized"])
def test_glom_modips_ledger_and_sanitized_count_sensitivity(cell_counts):
    model = GeneralLocationModel(LOWER, UPPER, cell_counts=cell_counts)
    synth = make_synthesizer("modips", model=model, m=5)
    data = glom_batch(r=4, n=300)
    rel = synth.release(data, 2.0, np.random.default_rng(9))
    assert rel.ledger.total_epsilon() == pytest.approx(2.0, rel=1e-12)
    assert len(rel.ledger) == 30  # 6 statistics × 5 sets, each ε/30
    for e in rel.ledger.entries:
        assert e.epsilon == pytest.approx(2.0 / 30)
    means = [e for e in rel.ledger.entries if "mean_" in e.statistic]
    assert all("per-element sensitivity" in e.note for e in means)
    if cell_counts == "true":
        assert means[0].sensitivity == pytest.approx(8.0 / data.cell_counts().min())
    assert isinstance(rel.sets, RecordBatch) and rel.sets.values.shape == (4, 5, 300, 2)


def test_glom_modips_reduces_to_ms_at_huge_epsilon():
    model = GeneralLocationModel(LOWER, UPPER)
    data = glom_batch(r=2000, n=200, seed=11)
    ms = make_synthesizer("ms", model=model, m=1).release(data, None, np.random.default_rng(1))
    md = make_synthesizer("modips", model=model, m=1).release(data, 1e9, np.random.default_rng(2))
    for rel in (ms, md):
        cov, _, _, _ = pooled_within_cell_covariance(rel.sets.values, rel.sets.cells, K)
        rel.cov = cov
    assert ms.cov.mean(axis=(0, 1)) == pytest.approx(md.cov.mean(axis=(0, 1)), rel=0.01)


# --- combining rule with dropped sets -------------------------------------------------------------


def test_combine_with_dropped_sets_uses_the_remaining_sets():
    rng = np.random.default_rng(12)
    q = rng.normal(size=(50, 5, 3))
    u = rng.uniform(0.1, 1.0, size=(50, 5, 3))
    full = combine(q, u)
    q2 = q.copy()
    q2[:, 0, 1] = np.nan  # one set dropped for estimand 1
    q2[:5, :, 2] = np.nan  # every set dropped: unusable
    q2[5:10, 1:, 2] = np.nan  # a single set left: m = 1 rule
    pooled = combine(q2, u)
    # untouched estimand: identical to the plain path
    assert np.allclose(pooled.estimate[:, 0], full.estimate[:, 0])
    assert np.allclose(pooled.variance[:, 0], full.variance[:, 0])
    # estimand 1 equals the rule applied to sets 2..5
    sub = combine(q[:, 1:, 1:2], u[:, 1:, 1:2])
    for field in ("estimate", "variance", "df", "ci_low", "ci_high"):
        assert np.allclose(getattr(pooled, field)[:, 1], getattr(sub, field)[:, 0])
    assert not pooled.usable[:5, 2].any() and np.isnan(pooled.estimate[:5, 2]).all()
    one = combine(q[5:10, :1, 2:3], u[5:10, :1, 2:3])
    assert np.allclose(pooled.variance[5:10, 2], one.variance[:, 0])
    assert np.all(np.isinf(pooled.df[5:10, 2])) and pooled.usable[5:10, 2].all()


# --- GLOM estimators against plain loops ---------------------------------------------------------


def test_glom_estimators_match_plain_loops():
    data = glom_batch(r=3, n=150, seed=13)
    values = data.values[:, None]  # a set axis, as in an analysis of releases
    cells = data.cells[:, None].copy()
    cells[0, 0, :] = np.where(cells[0, 0] == 0, 1, cells[0, 0])  # cell 0 empty in replicate 0
    cov, var_s2, counts, means = pooled_within_cell_covariance(values, cells, K)
    mu, mu_var = glom_cell_means(means, counts, np.diagonal(cov, axis1=-2, axis2=-1))
    r, r_var = correlation_from_covariance(cov, data.n)
    indicator = np.array([[1, 0], [1, 1], [0, 1], [0, 0]], dtype=float)
    p, p_var = marginal_proportions(counts, indicator, data.n)
    n = data.n
    for i in range(3):
        z, c = values[i, 0], cells[i, 0]
        occupied = [k for k in range(K) if (c == k).any()]
        resid = np.concatenate([z[c == k] - z[c == k].mean(axis=0) for k in occupied])
        s = resid.T @ resid / (n - len(occupied))
        assert np.allclose(cov[i, 0], s)
        kappa = (resid**4).mean(axis=0) / (resid**2).mean(axis=0) ** 2 - 3
        assert np.allclose(var_s2[i, 0], np.diag(s) ** 2 * (2 / (n - 1) + kappa / n))
        rho = s[0, 1] / math.sqrt(s[0, 0] * s[1, 1])
        assert r[i, 0] == pytest.approx(rho) and r_var[i, 0] == pytest.approx((1 - rho**2) / 148)
        for k in range(K):
            nk = (c == k).sum()
            if nk < 2:
                assert np.isnan(mu[i, 0, k]).all() and np.isnan(mu_var[i, 0, k]).all()
            else:
                assert np.allclose(mu[i, 0, k], z[c == k].mean(axis=0))
                assert np.allclose(mu_var[i, 0, k], np.diag(s) / nk)
        marg = np.array([(c == 0).sum() + (c == 1).sum(), (c == 1).sum() + (c == 2).sum()]) / n
        assert np.allclose(p[i, 0], marg) and np.allclose(p_var[i, 0], marg * (1 - marg) / n)
