"""The Chaudhuri–Monteleoni (2009) norm-based noise for L2-regularised logistic regression
(harness/privacy/mechanisms.py), used by MODIPS-Correct in Bowen & Liu Simulation 4
(§4.3.2; spec 000 §1.2, §4.4, §6 item 21): density ∝ exp(−nλε‖e‖/2) on R^d."""

import numpy as np
import pytest
from scipy import stats

from harness.privacy import PrivacyLedger
from harness.privacy.mechanisms import chaudhuri_monteleoni_noise


def noise(d, size, *, n=1000, lam=0.5, eps=1.0, seed=0, ledger=None, **kw):
    ledger = PrivacyLedger() if ledger is None else ledger
    e = chaudhuri_monteleoni_noise(
        np.zeros((size, d)), n=n, regularization=lam, epsilon=eps,
        rng=np.random.default_rng(seed), ledger=ledger, statistic="beta", **kw,
    )
    return e, ledger


@pytest.mark.parametrize(("d", "n", "lam", "eps"), [(3, 1000, 0.5, 1 / 40), (10, 1000, 0.5, 0.3),
                                                    (4, 200, 0.1, 2.0)])
def test_norm_is_gamma_with_shape_d_and_scale_two_over_n_lambda_eps(d, n, lam, eps):
    e, _ = noise(d, 100_000, n=n, lam=lam, eps=eps, seed=d)
    r = np.linalg.norm(e, axis=1)
    scale = 2 / (n * lam * eps)
    assert stats.kstest(r, stats.gamma(d, scale=scale).cdf).pvalue > 1e-3
    # power: a norm with shape d − 1 (e.g. a Laplace-per-coordinate slip) or twice the scale
    # is rejected
    assert stats.kstest(r, stats.gamma(d - 1 if d > 1 else 2, scale=scale).cdf).pvalue < 1e-6
    assert stats.kstest(r, stats.gamma(d, scale=2 * scale).cdf).pvalue < 1e-6


def test_direction_is_uniform_on_the_sphere_and_independent_of_the_norm():
    d = 5
    e, _ = noise(d, 200_000, seed=1)
    r = np.linalg.norm(e, axis=1)
    u = e / r[:, None]
    # E u = 0, E u uᵀ = I/d
    assert np.all(np.abs(u.mean(axis=0)) < 5 / np.sqrt(200_000))
    np.testing.assert_allclose(u.T @ u / len(u), np.eye(d) / d, atol=0.004)
    # any fixed direction: (1 + uᵀv)/2 ~ Beta((d − 1)/2, (d − 1)/2)
    v = np.random.default_rng(2).standard_normal(d)
    v /= np.linalg.norm(v)
    beta = stats.beta((d - 1) / 2, (d - 1) / 2)
    for w in (np.eye(d)[0], v):
        assert stats.kstest((1 + u @ w) / 2, beta.cdf).pvalue > 1e-3
    # norm independent of direction
    assert abs(stats.spearmanr(r, np.abs(u[:, 0])).statistic) < 5 / np.sqrt(200_000)


def test_one_dimension_is_the_laplace_mechanism():
    """d = 1: density ∝ exp(−a|e|) is Laplace(0, 1/a) = Laplace(Δ/ε) with Δ = 2/(nλ)."""
    e, _ = noise(1, 100_000, n=500, lam=0.2, eps=0.7, seed=3)
    assert stats.kstest(e[:, 0], stats.laplace(scale=2 / (500 * 0.2 * 0.7)).cdf).pvalue > 1e-3


def test_sim4_scale_and_the_ledger_entry():
    """MODIPS-Correct at n = 1000, λ = 0.5, ε/40 per coefficient vector (spec §4.4: a = 6.25ε)."""
    eps_total = 1.0
    eps_part = eps_total / 5 / 8
    e, ledger = noise(3, 50_000, eps=eps_part, seed=4, applied_to="posterior_draw")
    a = 1000 * 0.5 * eps_part / 2
    print(f"\nrate a = nλε/2 = {a:.4f} (spec: 6.25ε = {6.25 * eps_total:.4f}); mean ‖e‖ "
          f"{np.linalg.norm(e, axis=1).mean():.4f} vs d/a = {3 / a:.4f}")
    assert a == pytest.approx(6.25 * eps_total)
    assert np.linalg.norm(e, axis=1).mean() == pytest.approx(3 / a, rel=0.01)
    (entry,) = ledger.entries
    assert entry.mechanism == "chaudhuri_monteleoni_2009"
    assert entry.epsilon == eps_part and entry.statistic == "beta"
    assert entry.sensitivity == pytest.approx(2 / (1000 * 0.5))
    assert entry.scale == pytest.approx(1 / a)
    assert "posterior draw" in entry.note and "not a proven DP" in entry.note
    # the default target is the minimiser, and the note then does not claim the heuristic
    _, led2 = noise(3, 10, eps=0.5)
    assert "posterior draw" not in led2.entries[0].note
    # eight components at ε/40 compose to ε/5 per set
    led = PrivacyLedger()
    for _ in range(8):
        noise(3, 2, eps=eps_part, ledger=led)
    assert led.total_epsilon() == pytest.approx(eps_total / 5)


def test_leading_axes_get_independent_noise_and_values_are_shifted():
    values = np.arange(2 * 3 * 10, dtype=float).reshape(2, 3, 10)
    out = chaudhuri_monteleoni_noise(values, n=1000, regularization=0.5, epsilon=1.0,
                                     rng=np.random.default_rng(5), ledger=PrivacyLedger(),
                                     statistic="b34")
    e = out - values
    assert out.shape == values.shape
    r = np.linalg.norm(e, axis=-1)
    assert np.unique(r).size == 6 and np.all(r > 0)
    # per-replicate n: smaller n, larger noise
    big = chaudhuri_monteleoni_noise(np.zeros((2, 20_000, 2)), n=np.array([[100.0], [1000.0]]),
                                     regularization=0.5, epsilon=1.0,
                                     rng=np.random.default_rng(6), ledger=PrivacyLedger(),
                                     statistic="b")
    means = np.linalg.norm(big, axis=-1).mean(axis=-1)
    np.testing.assert_allclose(means, [2 * 2 / (100 * 0.5), 2 * 2 / (1000 * 0.5)], rtol=0.03)


def test_bad_arguments_are_refused():
    for kw, msg in (({"eps": 0.0}, "epsilon"), ({"lam": 0.0}, "regularization"),
                    ({"n": 0}, "n must"), ({"applied_to": "mode"}, "applied_to")):
        with pytest.raises(ValueError, match=msg):
            noise(3, 2, **kw)
