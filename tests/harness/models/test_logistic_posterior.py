"""Posterior samplers for (multinomial) logistic regression (harness/models/logistic.py) and
the MCMC diagnostics (harness/models/diagnostics.py), the β-steps of the SLOMAG synthesizers
of Bowen & Liu Simulation 4 (§4.3.2 Eqs. 12–14; spec 000 §4.4, §6 items 20–21).

The sampler (independence Metropolis–Hastings with a t Laplace proposal, one short chain per
draw) is checked against the exact posterior by numerical integration (p = 2), against
importance sampling on SLOMAG data, and by split R-hat / ESS; the paper's random-walk
Metropolis sampler against numerical integration and importance sampling on small data.
"""

import functools

import numpy as np
import pytest
import statsmodels.api as sm
from float_compare import assert_close_ulps
from scipy import stats
from scipy.special import expit, logsumexp

from harness.models.diagnostics import effective_sample_size, split_rhat
from harness.models.logistic import (
    log_posterior,
    posterior_draws,
    posterior_mode,
    predictive_draw,
    random_walk_metropolis,
)

# the SLOMAG data-generating process of Bowen & Liu §4.3.2 (the paper's constants are
# repeated here only as test data)
BETA1 = np.array([-1.0, 0.5, -1.0])
BETA2 = np.array([-2.0, -1.0, 1.5, 0.5])
BETA34 = np.array([[0.0, -2.5, 1.0, 0.5, 0.4], [0.1, -1.0, -0.5, 0.0, 1.5]])


def slomag(rng, R, n=1000):
    """Designs and responses of the three SLOMAG regressions (raw scale, intercept first)."""
    z = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=(R, n)).clip(-4, 4)
    x1 = np.concatenate([np.ones((R, n, 1)), z], axis=-1)
    w1 = predictive_draw(x1, BETA1, rng)
    x2 = np.concatenate([x1, w1[..., None]], axis=-1)
    w2 = predictive_draw(x2, BETA2, rng)
    x3 = np.concatenate([x2, w2[..., None]], axis=-1)
    w3 = predictive_draw(x3, BETA34, rng, n_categories=3)
    return (x1, w1), (x2, w2), (x3, w3)


# ----------------------------------------------------------------------------- the model


def test_predictive_draw_frequencies():
    rng = np.random.default_rng(1)
    n = 300_000
    x = np.column_stack([np.ones(n), np.repeat([0.0, 1.0], n // 2)])
    beta = np.array([[0.2, -0.7], [-0.4, 1.1]])
    y = predictive_draw(x, beta, rng, n_categories=3)
    for g in (0, 1):
        eta = np.r_[0.0, beta[:, 0] + g * beta[:, 1]]
        p = np.exp(eta - logsumexp(eta))
        counts = np.bincount(y[x[:, 1] == g], minlength=3)
        assert stats.chisquare(counts, p * counts.sum()).pvalue > 1e-3
    yb = predictive_draw(x, np.array([0.3, -1.0]), rng)
    for g in (0, 1):
        phat = yb[x[:, 1] == g].mean()
        assert abs(phat - expit(0.3 - g)) < 4 * np.sqrt(0.25 / (n // 2))


def test_log_posterior_is_the_multinomial_likelihood_plus_normal_prior():
    rng = np.random.default_rng(2)
    x = np.column_stack([np.ones(50), rng.standard_normal((50, 2))])
    y = rng.integers(0, 3, 50)
    beta = rng.standard_normal((2, 3)) * 0.3
    eta = np.column_stack([np.zeros(50), x @ beta.T])
    ll = np.sum(eta[np.arange(50), y] - logsumexp(eta, axis=1))
    np.testing.assert_allclose(log_posterior(beta, x, y, 3), ll, rtol=1e-12)
    np.testing.assert_allclose(log_posterior(beta, x, y, 3, 0.5), ll - 0.25 * np.sum(beta**2),
                               rtol=1e-12)
    # binary: the Bernoulli likelihood
    yb = (y > 0).astype(int)
    b = beta[:1]
    e = x @ b[0]
    np.testing.assert_allclose(log_posterior(b, x, yb), np.sum(yb * e - np.logaddexp(0, e)),
                               rtol=1e-12)


def test_mode_with_flat_prior_is_the_mle_and_separation_is_flagged():
    rng = np.random.default_rng(3)
    (x1, w1), _, (x3, w3) = slomag(rng, 2, n=600)
    mode, _, ok = posterior_mode(x1, w1)
    assert ok.all()
    for r in range(2):
        np.testing.assert_allclose(mode[r, 0], sm.Logit(w1[r], x1[r]).fit(disp=0).params,
                                   atol=1e-7)
    mode3, neg_h, ok3 = posterior_mode(x3, w3, n_categories=3)
    assert ok3.all()
    mn = sm.MNLogit(w3[0], x3[0]).fit(disp=0, method="newton", maxiter=100)
    np.testing.assert_allclose(mode3[0], mn.params.T, atol=1e-6)
    np.testing.assert_allclose(np.linalg.inv(neg_h[0]), mn.cov_params(), rtol=1e-5, atol=1e-9)
    # complete separation: no mode with a flat prior (improper posterior); a N(0, 2) prior
    # gives a proper posterior and draws
    xs = np.column_stack([np.ones(30), np.linspace(-1, 1, 30)])
    ys = (xs[:, 1] > 0).astype(int)
    post = posterior_draws(xs, ys, 5, rng)
    assert not post.ok and np.isnan(post.draws).all()
    post = posterior_draws(xs, ys, 5, rng, prior_precision=0.5)
    assert post.ok and np.isfinite(post.draws).all()


# ----------------------------------------------------------------------------- exact posterior


def _small_data():
    """The small, skewed data set of the exact-posterior tests (n = 40, p = 2), and the
    generator that drew it (the tests draw on from it)."""
    rng = np.random.default_rng(4)
    n = 40
    x = np.column_stack([np.ones(n), rng.standard_normal(n)])
    y = (rng.random(n) < expit(-1.0 + 1.5 * x[:, 1])).astype(int)
    return rng, x, y


@functools.cache
def _exact_posterior(lam):
    """The quadrature of :func:`_quadrature_posterior` on :func:`_small_data` (~2 s each;
    shared by the tests of one λ)."""
    _, x, y = _small_data()
    return _quadrature_posterior(x, y, lam, (np.linspace(-6, 4, 801), np.linspace(-2, 8, 801)))


def _quadrature_posterior(x, y, lam, grid):
    """Posterior mean, SD and 5/50/95 % quantiles of (β0, β1) on a fine 2-D grid."""
    b0, b1 = np.meshgrid(grid[0], grid[1], indexing="ij")
    beta = np.stack([b0, b1], axis=-1)[..., None, :]  # (G0, G1, 1, 2)
    lp = log_posterior(beta, x[None, None], y[None, None], 2, lam)
    w = np.exp(lp - lp.max())
    w /= w.sum()
    out = []
    for axis, g in ((1, grid[0]), (0, grid[1])):
        marg = w.sum(axis=axis)
        mean = np.sum(marg * g)
        sd = np.sqrt(np.sum(marg * (g - mean) ** 2))
        cdf = np.cumsum(marg)
        q = np.interp([0.05, 0.5, 0.95], cdf, g)
        out.append((mean, sd, q))
    return out


@pytest.mark.parametrize(("lam", "df"), [(0.0, 10.0), (0.5, 10.0), (0.5, 3.0)])
def test_draws_match_the_exact_posterior_by_numerical_integration(lam, df):
    """A small, skewed posterior (n = 40, p = 2): 20,000 draws (4,000 replicates of the same
    data set × 5 draws) against 2-D quadrature."""
    rng, x, y = _small_data()
    n = y.size
    post = posterior_draws(np.broadcast_to(x, (4000, n, 2)), np.broadcast_to(y, (4000, n)), 5,
                           rng, prior_precision=lam, df=df)
    draws = post.draws.reshape(-1, 2)
    exact = _exact_posterior(lam)
    print(f"\nλ = {lam}, df = {df}, acceptance {post.acceptance.mean():.3f}")
    for j, (mean, sd, q) in enumerate(exact):
        d = draws[:, j]
        qd = np.quantile(d, [0.05, 0.5, 0.95])
        print(f"β{j}: exact mean {mean:.4f} sd {sd:.4f} q {np.round(q, 4)} | "
              f"draws mean {d.mean():.4f} sd {d.std():.4f} q {np.round(qd, 4)}")
        se = sd / np.sqrt(d.size)
        assert abs(d.mean() - mean) < 4 * se
        assert abs(d.std() / sd - 1) < 4 * np.sqrt(0.5 / d.size) * 1.5  # kurtosis allowance
        qse = sd * np.sqrt(0.05 * 0.95 / d.size) / stats.norm.pdf(1.645)
        assert np.all(np.abs(qd - q) < 4 * np.array([qse, sd * 1.2533 / np.sqrt(d.size), qse]))
    # draws of one replicate are independent: their correlation across replicates is ~0
    c = np.corrcoef(post.draws[:, 0, 1], post.draws[:, 1, 1])[0, 1]
    assert abs(c) < 4 / np.sqrt(4000)


def test_wrong_acceptance_ratio_would_be_caught():
    """Sanity check of the test above: the t proposal itself (no Metropolis correction) has
    visibly the wrong spread with df = 3, so the exact-posterior comparison has power."""
    rng, x, y = _small_data()
    n = y.size
    post = posterior_draws(np.broadcast_to(x, (4000, n, 2)), np.broadcast_to(y, (4000, n)), 5,
                           rng, prior_precision=0.5, df=3.0, n_steps=0)
    (_, sd0, _), (_, sd1, _) = _exact_posterior(0.5)
    d = post.draws.reshape(-1, 2)
    assert d[:, 1].std() / sd1 > 1.15  # t_3 without correction: far too wide


# ------------------------------------------------------------------- SLOMAG, exact reference


def _summary(draws, weights=None, ess=None):
    """Per coordinate of draws (N, d): mean, SD, 5/95 % quantiles and the effective sample
    size of the mean. Weighted (self-normalised importance sampling): the quantiles interpolate
    the weighted CDF at the draws' mid-weights, and the effective sample size is SD²/SE², the
    SE of the weighted mean being √Σ w²(θ − mean)² (w summing to 1); unweighted: ``ess`` (the
    number of draws for independent draws)."""
    w = np.full(len(draws), 1.0 / len(draws)) if weights is None else weights / weights.sum()
    mean = w @ draws
    sd = np.sqrt(w @ (draws - mean) ** 2)
    q = np.empty((draws.shape[1], 2))
    for j in range(draws.shape[1]):
        order = np.argsort(draws[:, j])
        cdf = np.cumsum(w[order]) - 0.5 * w[order]
        q[j] = np.interp([0.05, 0.95], cdf, draws[order, j])
    if weights is not None:
        ess = sd**2 / ((w * w) @ (draws - mean) ** 2)
    return mean, sd, q, np.broadcast_to(np.asarray(ess, dtype=float), mean.shape)


def _importance_reference(x, y, k, lam, n_draws, rng, df=4.0, inflate=1.2, chunk=2000):
    """An exact reference of the posterior of β (flattened (K−1)p): self-normalised importance
    sampling with a t_4 proposal around the posterior mode, its Laplace scale widened by 1.2
    (heavier tails than the posterior in every direction, so the weights are bounded), the
    target :func:`log_posterior` and scipy's t density (neither is the sampler's code)."""
    mode, neg_h, ok = posterior_mode(x[None], y[None], k, lam)
    assert ok.all()
    proposal = stats.multivariate_t(mode[0].reshape(-1), np.linalg.inv(neg_h[0]) * inflate**2,
                                    df=df, seed=rng)
    theta = proposal.rvs(n_draws)
    lp = np.concatenate([log_posterior(theta[s:s + chunk].reshape(-1, k - 1, x.shape[1]), x, y,
                                       k, lam) for s in range(0, n_draws, chunk)])
    lw = lp - proposal.logpdf(theta)
    return _summary(theta, np.exp(lw - lw.max()))


def _compare(name, ours, ref):
    """Mean, SD and 5/95 % quantiles of two samples (:func:`_summary`) per coordinate, within
    Monte Carlo error (SEs from both effective sample sizes)."""
    print(f"\n{name}: coordinate | ours mean sd q05 q95 ESS | reference mean sd q05 q95 ESS "
          "| z(mean)")
    zmax = 0.0
    for j in range(len(ours[0])):
        (ma, sa, qa, ea), (mb, sd, qb, eb) = ((s[0][j], s[1][j], s[2][j], s[3][j])
                                              for s in (ours, ref))
        se = sd * np.sqrt(1 / ea + 1 / eb)
        z = (ma - mb) / se
        zmax = max(zmax, abs(z))
        print(f"  {j}: {ma:+.4f} {sa:.4f} {qa[0]:+.4f} {qa[1]:+.4f} {ea:.0f} | "
              f"{mb:+.4f} {sd:.4f} {qb[0]:+.4f} {qb[1]:+.4f} {eb:.0f} | {z:+.2f} "
              f"sd {(sa / sd - 1) / (np.sqrt(0.5 / ea + 0.5 / eb) * 1.3):+.2f}")
        assert abs(z) < 4.0
        sd_se = np.sqrt(0.5 / ea + 0.5 / eb) * 1.3
        assert abs(sa / sd - 1) < 4 * sd_se
        q_se = sd * np.sqrt(0.05 * 0.95) / stats.norm.pdf(1.645) * np.sqrt(1 / ea + 1 / eb)
        assert np.all(np.abs(qa - qb) < 4 * q_se)
    return zmax


#: (independence-sampler draws, importance-sampling draws) per model (sizes: the test's
#: docstring)
SLOMAG_SIZES = {"w1_modips": (4000, 20_000), "w3_ms": (3000, 30_000)}


def _slomag_model(model, rng):
    """One SLOMAG data set (n = 1000): (x, y, K, λ) of the W1 regression as MODIPS-Correct
    fits it (N(0, 1/0.5) prior, predictors ‖x‖ ≤ 1) or of W3 as MS does (flat prior,
    multinomial, 10 coefficients)."""
    (x1, w1), _, (x3, w3) = slomag(rng, 1)
    if model == "w1_modips":
        return x1[0] / np.sqrt(33.0), w1[0], 2, 0.5
    return x3[0], w3[0], 3, 0.0


@pytest.mark.slow
@pytest.mark.parametrize("model", ["w1_modips", "w3_ms"])
def test_draws_agree_with_an_exact_reference_on_slomag_data(model):
    """One SLOMAG data set (n = 1000): independence-sampler draws (4,000 for W1, 3,000 for W3)
    against self-normalised importance sampling (20,000 / 30,000 draws, effective sample size
    ≈ 18,000 either way).

    This reference replaced 4 random-walk Metropolis chains × 30,000 iterations (ESS ≈ 10,000
    for W1, ≈ 3,300 for W3; 12 of this test's ~21 CPU-s): at equal cost per target evaluation
    it has ~6× (W1) and ~18× (W3) the effective sample size, so the SEs (both samples'
    effective sizes) are below the old ones: W1 √(1/4000 + 1/18400) against
    √(1/4000 + 1/10400), W3 √(1/3000 + 1/17900) against √(1/4000 + 1/3300). The sizes are
    what the planted bugs need: with them (4 seeds of both samples each), the independence
    sampler without its Metropolis correction gives |SD z| 6.8-8.9 (W1) and 7.3-8.5 (W3), and
    a multinomial-only bug (the t proposal's log density with dimension p, not (K−1)p)
    6.8-7.7 (SD) and 5.9-6.9 (quantiles), against the bound 4 (the correct sampler: ≤ 2.6);
    the prior left out of the W1 target gives |z| ≈ 127."""
    rng = np.random.default_rng(7)
    x, y, k, lam = _slomag_model(model, rng)
    n_ours, n_ref = SLOMAG_SIZES[model]
    ref = _importance_reference(x, y, k, lam, n_ref, np.random.default_rng(8))
    post = posterior_draws(x, y, n_ours, rng, n_categories=k, prior_precision=lam)
    print(f"\nindependence sampler acceptance {post.acceptance.mean():.3f}")
    _compare(model, _summary(post.draws.reshape(n_ours, -1), ess=n_ours), ref)


def _small_multinomial_data():
    """A small multinomial data set (n = 60, K = 3, p = 2: 4 coefficients)."""
    rng = np.random.default_rng(5)
    x = np.column_stack([np.ones(60), rng.standard_normal(60)])
    y = predictive_draw(x, np.array([[-0.5, 1.0], [0.3, -0.8]]), rng, n_categories=3)
    return x, y


@pytest.mark.parametrize("k", [2, 3])
def test_random_walk_metropolis_samples_the_exact_posterior(k):
    """The paper's sampler (the reference the synthesizers' draws once were checked against)
    on small data: 25 copies of the data set × 4 chains × 3,000 iterations, against the
    quadrature of the n = 40 binary data set (λ = 0.5) or an importance-sampling reference of
    a multinomial one (flat prior); split R-hat over the 100 chains ≈ 1."""
    if k == 2:
        rng, x, y = _small_data()
        lam = 0.5
        exact = _exact_posterior(lam)
        ref = (np.array([e[0] for e in exact]), np.array([e[1] for e in exact]),
               np.array([e[2][[0, 2]] for e in exact]), np.full(2, np.inf))
    else:
        x, y = _small_multinomial_data()
        rng, lam = np.random.default_rng(6), 0.0
        ref = _importance_reference(x, y, k, lam, 40_000, np.random.default_rng(7))
    chains, acc = random_walk_metropolis(np.broadcast_to(x, (25, *x.shape)),
                                         np.broadcast_to(y, (25, y.size)), 3000, rng,
                                         n_chains=4, n_categories=k, prior_precision=lam)
    chains = np.moveaxis(chains[:, :, 500:].reshape(100, 2500, -1), -1, 0)  # burn-in
    rhat, ess = split_rhat(chains), effective_sample_size(chains)
    print(f"\nRWM acceptance {acc.mean():.3f}, split R-hat max {rhat.max():.4f}, "
          f"ESS min {ess.min():.0f}")
    assert rhat.max() < 1.01
    draws = chains.reshape(chains.shape[0], -1).T
    _compare(f"RWM K = {k}", _summary(draws, ess=ess), ref)


# ----------------------------------------------------------------------------- convergence


def test_convergence_diagnostics_on_a_sample_of_slomag_replicates():
    """10 SLOMAG replicates, all three regressions, both priors: 4 independence chains of 400
    steps each (traces kept): split R-hat ≈ 1 and ESS near the number of draws.

    10 replicates (was 20) are what the bounds need: correct, the worst of the 6 models gave
    R-hat 1.009, ESS/draw 0.46, acceptance 0.73 (20 replicates: 1.015, 0.37, 0.72); a
    proposal scale off by 2 either way gave acceptance ≤ 0.37, ESS/draw ≤ 0.17 and R-hat up to
    1.23-1.49 in every model, far past all three bounds. Halving the steps instead would not
    do: at 200 steps R-hat's noise reached 1.018 against the bound 1.02."""
    rng = np.random.default_rng(9)
    models = slomag(rng, 10)
    norms = (np.sqrt(33.0), np.sqrt(34.0), np.sqrt(35.0))  # public max ‖x‖ (spec §6.21)
    print("\nmodel prior: acceptance mean/min, split R-hat max, ESS/draw min")
    for (x, y), c, k in zip(models, norms, (2, 2, 3), strict=True):
        for lam, scale in ((0.0, 1.0), (0.5, c)):
            post = posterior_draws(x / scale, y, 4, rng, n_categories=k, prior_precision=lam,
                                   n_steps=400, keep_trace=True)
            tr = np.moveaxis(post.trace[:, :, 1:], -1, 1)  # (R, d, chains, steps)
            rhat = split_rhat(tr)
            ess = effective_sample_size(tr) / (4 * 400)
            print(f"  p={x.shape[-1]} K={k} λ={lam}: {post.acceptance.mean():.3f}/"
                  f"{post.acceptance.min():.3f}, {rhat.max():.4f}, {ess.min():.2f}")
            assert post.ok.all()
            assert rhat.max() < 1.02
            assert ess.min() > 0.3
            assert post.acceptance.min() > 0.5


def test_diagnostics_on_known_processes():
    rng = np.random.default_rng(10)
    iid = rng.standard_normal((50, 4, 2000))
    assert np.all(np.abs(split_rhat(iid) - 1) < 0.01)
    ess = effective_sample_size(iid) / 8000
    assert abs(ess.mean() - 1) < 0.05
    rho = 0.8
    e = rng.standard_normal((50, 4, 2000))
    ar = np.empty_like(e)
    ar[..., 0] = e[..., 0] / np.sqrt(1 - rho**2)
    for t in range(1, 2000):
        ar[..., t] = rho * ar[..., t - 1] + e[..., t]
    ess = effective_sample_size(ar).mean() / 8000
    assert abs(ess / ((1 - rho) / (1 + rho)) - 1) < 0.1
    shifted = iid.copy()
    shifted[:, 0] += 1.0  # one chain stuck elsewhere
    assert np.all(split_rhat(shifted) > 1.05)
    assert np.all(split_rhat(shifted, rank=True) > 1.05)
    drift = iid + np.linspace(0, 3, 2000)  # non-stationary within chains: split R-hat sees it
    assert np.all(split_rhat(drift) > 1.1)


# ----------------------------------------------------------------------------- API


def test_draws_are_reproducible_and_shaped_for_reuse_across_epsilon():
    rng = np.random.default_rng(12)
    (x1, w1), _, (x3, w3) = slomag(rng, 3, n=400)
    a = posterior_draws(x3, w3, 5, np.random.default_rng(0), n_categories=3)
    b = posterior_draws(x3, w3, 5, np.random.default_rng(0), n_categories=3)
    assert a.draws.shape == (3, 5, 2, 5) and a.mode.shape == (3, 2, 5)
    np.testing.assert_array_equal(a.draws, b.draws)
    c = posterior_draws(x1, w1, 5, np.random.default_rng(0))
    assert c.draws.shape == (3, 5, 3) and c.ok.all() and np.isfinite(c.draws).all()
    # a different seed gives different draws around the same mode
    e = posterior_draws(x1, w1, 5, np.random.default_rng(1))
    assert not np.allclose(c.draws, e.draws)
    np.testing.assert_allclose(c.mode, e.mode)
    with pytest.raises(ValueError, match="integer codes"):
        posterior_draws(x1, w1 + 2, 5, rng)
    with pytest.raises(ValueError, match="prior_precision"):
        posterior_draws(x1, w1, 5, rng, prior_precision=-1.0)


def test_frequency_weights_give_the_fit_of_the_expanded_records():
    """posterior_mode(weights=) on collapsed records (collapse_batch) is the fit of the records
    themselves up to rounding, converged or not (a separated binary column: the last of 25
    steps), and the step halving that re-evaluates only the halving data sets is exercised."""
    from harness.inference.design import collapse_batch

    rng = np.random.default_rng(8)
    B, n = 4, 3000
    x = np.stack([rng.integers(0, 6, (B, n)), rng.integers(0, 2, (B, n)),
                  rng.random((B, n)) < 0.002], axis=-1).astype(float)
    y = (rng.random((B, n)) < 1 / (1 + np.exp(1.5 - 0.3 * x[..., 0]))).astype(float)
    y[x[..., 2] == 1] = 0  # the rare column's ones all have y = 0: separation
    x[0, :, 2] = 0  # ... except in data set 0, where the column is constant (singular step)
    rows, counts = collapse_batch(x, y[..., None])
    assert rows.shape[1] <= 6 * 2 * 2 * 2 and np.all(counts.sum(axis=1) == n)
    kw = dict(maxit=25, tol=1e-8, max_abs=np.inf)
    full = posterior_mode(np.concatenate([np.ones((B, n, 1)), x], -1), y.astype(int), **kw)
    design = np.concatenate([np.ones((*rows.shape[:2], 1)), rows[..., :3]], -1)
    grouped = posterior_mode(design, rows[..., 3].astype(int), weights=counts, **kw)
    print("ok", full[2], grouped[2], "coefficients", full[0][:, 0], grouped[0][:, 0], sep="\n")
    np.testing.assert_array_equal(full[2], grouped[2])
    assert full[2][0] and not full[2][1:].any()
    np.testing.assert_allclose(grouped[0], full[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(grouped[1], full[1], rtol=1e-9, atol=1e-6)


def test_each_data_set_is_fitted_as_if_alone_when_some_halve_their_steps(monkeypatch):
    """Step halving re-evaluates only the data sets whose log posterior fell: a batch of a
    data set that halves many times (7 records, widely spread covariates, 3 categories) and two
    that do not gives every data set the mode, Hessian and flag it gets alone (the mode and
    Hessian to rounding: a batch and a data set alone are two paths, whose array shapes pick
    the BLAS and SIMD kernels per CPU; a batch that halved every data set's step, or none,
    would be far off)."""
    import harness.models.logistic as logistic

    rng = np.random.default_rng(1)
    hard = (np.concatenate([np.ones((1, 7, 1)), rng.normal(size=(1, 7, 2)) * 20], -1),
            rng.integers(0, 3, size=(1, 7)))
    easy = (np.concatenate([np.ones((2, 7, 1)), rng.normal(size=(2, 7, 2))], -1),
            rng.integers(0, 3, size=(2, 7)))
    x = np.concatenate([easy[0][:1], hard[0], easy[0][1:]])
    y = np.concatenate([easy[1][:1], hard[1], easy[1][1:]])
    calls = {"log posterior": 0, "Newton step": 0}
    real_target, real_step = logistic._Target.__call__, logistic._grad_hess

    def target(self, beta):
        calls["log posterior"] += 1
        return real_target(self, beta)

    def step(*args):
        calls["Newton step"] += 1
        return real_step(*args)

    monkeypatch.setattr(logistic._Target, "__call__", target)
    monkeypatch.setattr(logistic, "_grad_hess", step)
    batch = posterior_mode(x, y, 3)
    print(calls)
    # one evaluation at the start and one per step, the rest are halvings (the last Newton
    # call is the Hessian at the mode)
    assert calls["log posterior"] - calls["Newton step"] > 20
    for b in range(3):
        alone = posterior_mode(x[b:b + 1], y[b:b + 1], 3)
        mode, hessian, ok = batch
        assert_close_ulps(mode[b], alone[0][0], ulps=64, scale=np.abs(alone[0][0]).max())
        assert_close_ulps(hessian[b], alone[1][0], ulps=64, scale=np.abs(alone[1][0]).max())
        np.testing.assert_array_equal(ok[b], alone[2][0])
