"""The α-weighted conjugate samplers and the two survey models (harness.models.survey): closed
form log likelihoods against scipy, the FBP identity (Eq. 6 = recursive Gaussian − log π), and
posterior draws against brute-force weighted fits."""

import numpy as np
import pytest
from scipy import stats

from harness.models.survey import PopulationDraws, PopulationModel, SampleModel
from harness.models.weighted_regression import design_matrix, ones_coefficients


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, 4, n), rng.integers(0, 2, n)], axis=-1)
    x = design_matrix(codes, (4, 2))
    log_y = 11.0 + x @ rng.normal(0, 0.2, x.shape[1]) + 0.4 * rng.standard_normal(n)
    log_w = 4.0 - 0.8 * (log_y - 11.0) + 0.3 * rng.standard_normal(n)
    alpha = rng.uniform(0.05, 1.0, n)
    alpha[:20] = 0.0  # dropped records
    return x, log_y, np.exp(log_w), alpha


def _wls(x, z, alpha):
    """Brute force: least squares on √α-scaled rows; residual cross-products weighted by α."""
    s = np.sqrt(alpha)[:, None]
    coef = np.linalg.lstsq(x * s, z * s, rcond=None)[0]
    r = z - x @ coef
    return coef, (r * alpha[:, None]).T @ r


def test_design_matrix_forms():
    codes = np.array([[0, 0], [1, 1], [3, 0]])
    add = design_matrix(codes, (4, 2))
    assert add.tolist() == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 1], [1, 0, 0, 1, 0]]
    cells = design_matrix(codes, (4, 2), "interaction")
    assert cells.shape == (3, 8) and cells[1, 3] == 1 and cells[2, 6] == 1
    assert ones_coefficients(add) == pytest.approx([1, 0, 0, 0, 0], abs=1e-12)


def test_sample_model_loglik_matches_scipy():
    x, log_y, w, alpha = _data()
    model = SampleModel()
    z = model.response(log_y, w)
    d = model.fit(x, z, np.ones(x.shape[0]), 5, np.random.default_rng(1))
    ll = model.loglik(d, x, z)
    for s in range(5):
        expect = [stats.multivariate_normal(x[i] @ d.coef[s], d.cov[s]).logpdf(z[i])
                  for i in range(0, x.shape[0], 37)]
        assert ll[s, ::37] == pytest.approx(expect, rel=1e-10)


@pytest.mark.parametrize("scale", ["mean1", "actual"])
def test_fbp_identity_eq6_is_a_recursive_gaussian_minus_log_pi(scale):
    x, log_y, w, _ = _data(2)
    rng = np.random.default_rng(3)
    k, s = x.shape[1], 6
    d = PopulationDraws(rng.normal(0, 1, (s, k)), rng.uniform(0.1, 0.3, s), rng.normal(1, 0.3, s),
                        rng.normal(-10, 1, (s, k)), rng.uniform(0.1, 0.5, s))
    model = PopulationModel(pi_scale=scale)
    resp = model.response(log_y, w)
    t = resp[:, 1]
    c = ones_coefficients(x)
    gamma = d.beta + (d.kappa_y * d.sigma_y2)[:, None] * c
    delta = d.kappa_x + d.sigma_pi2[:, None] * c
    recursive = (stats.norm.logpdf(t, d.kappa_y[:, None] * log_y + delta @ x.T,
                                   np.sqrt(d.sigma_pi2)[:, None])
                 + stats.norm.logpdf(log_y, gamma @ x.T, np.sqrt(d.sigma_y2)[:, None]) - t)
    assert model.loglik(d, x, resp) == pytest.approx(recursive, rel=1e-10, abs=1e-10)
    # the literal Eq. 6 written out term by term
    xb, xk = d.beta @ x.T, d.kappa_x @ x.T
    ky, sy2, sp2 = d.kappa_y[:, None], d.sigma_y2[:, None], d.sigma_pi2[:, None]
    literal = (stats.norm.logpdf(t, ky * log_y + xk, np.sqrt(sp2))
               + stats.norm.logpdf(log_y, xb, np.sqrt(sy2))
               - (xk + sp2 / 2 + ky * xb + ky**2 * sy2 / 2))
    assert model.loglik(d, x, resp) == pytest.approx(literal, rel=1e-10, abs=1e-10)
    log_pi = PopulationModel(pi_scale=scale, loglik_measure="log_pi")
    assert log_pi.loglik(d, x, resp) == pytest.approx(literal + t, rel=1e-10, abs=1e-10)
    if scale == "mean1":
        assert np.exp(-t).mean() == pytest.approx(1.0)  # weights w/w̄ have mean 1


def _z(draws, expect):
    """Largest |mean − expect| in Monte Carlo standard errors."""
    sd = draws.std(axis=0, ddof=1)
    return np.max(np.abs(draws.mean(axis=0) - expect) / (sd / np.sqrt(draws.shape[0])))


def test_fbs_weighted_draws_match_closed_form_moments():
    x, log_y, w, alpha = _data(4)
    model = SampleModel(prior_df=4.0, prior_scale=1e-3)
    z = model.response(log_y, w)
    s = 20_000
    d = model.fit(x, z, alpha, s, np.random.default_rng(5))
    coef, ssr = _wls(x, z, alpha)
    k = x.shape[1]
    nu = alpha.sum() - k + 4.0
    mean_cov = (ssr + 1e-3 * np.eye(2)) / (nu - 3)
    assert _z(d.coef.reshape(s, -1), coef.ravel()) < 4.5
    assert d.cov.mean(axis=0) == pytest.approx(mean_cov, rel=0.02)
    # posterior covariance of one coefficient column: E[Σ_11] (XᵀAX)⁻¹
    xtax_inv = np.linalg.inv((x * alpha[:, None]).T @ x)
    assert np.cov(d.coef[:, :, 0].T) == pytest.approx(mean_cov[0, 0] * xtax_inv, rel=0.05,
                                                      abs=0.03 * mean_cov[0, 0] * xtax_inv.max())


@pytest.mark.parametrize("form", ["additive", "interaction"])
def test_fbp_weighted_draws_match_brute_force_weighted_fits(form):
    x, log_y, w, alpha = _data(6)
    if form == "interaction":  # cell means: X c = 1 with c = 1
        x = design_matrix(np.stack([x[:, 1:4] @ [1, 2, 3], x[:, 4]], -1).astype(int), (4, 2),
                          form)
        assert ones_coefficients(x) == pytest.approx(np.ones(8))
    model = PopulationModel()
    resp = model.response(log_y, w)
    s = 20_000
    d = model.fit(x, resp, alpha, s, np.random.default_rng(7))
    c = ones_coefficients(x)
    k = x.shape[1]
    gamma_hat, ssr_y = _wls(x, log_y[:, None], alpha)
    xt = np.column_stack([log_y, x])
    coef_hat, ssr_t = _wls(xt, resp[:, 1:], alpha)
    gamma = d.beta + (d.kappa_y * d.sigma_y2)[:, None] * c
    delta = d.kappa_x + d.sigma_pi2[:, None] * c
    assert _z(gamma, gamma_hat[:, 0]) < 4.5
    assert _z(np.column_stack([d.kappa_y, delta]), coef_hat[:, 0]) < 4.5
    n_alpha = alpha.sum()
    assert d.sigma_y2.mean() == pytest.approx(ssr_y[0, 0] / (n_alpha - k - 2), rel=0.01)
    assert d.sigma_pi2.mean() == pytest.approx(ssr_t[0, 0] / (n_alpha - k - 3), rel=0.01)


def test_smoothed_weights_use_the_synthetic_outcome_and_the_total():
    x, log_y, w, alpha = _data(8)
    model = SampleModel()
    z = model.response(log_y, w)
    d = model.fit(x, z, np.ones(x.shape[0]), 3, np.random.default_rng(9))
    rng = np.random.default_rng(10)
    y_star, w_synth, w_smooth = model.synthesize(d, x, 1234.5, rng)
    assert w_smooth.sum(axis=1) == pytest.approx([1234.5] * 3)
    # log smoothed weight = x β_w + Σ12/Σ11 (ỹ* − x β_y) + a per-set constant
    mean = np.einsum("nk,skd->snd", x, d.coef)
    expect = mean[..., 1] + (d.cov[:, 0, 1] / d.cov[:, 0, 0])[:, None] * (np.log(y_star)
                                                                         - mean[..., 0])
    diff = np.log(w_smooth) - expect
    assert diff.std(axis=1) == pytest.approx([0, 0, 0], abs=1e-9)
    fbp = PopulationModel()
    dp = fbp.fit(x, fbp.response(log_y, w), np.ones(x.shape[0]), 2, np.random.default_rng(11))
    y2, _, ws2 = fbp.synthesize(dp, x, 99.0, np.random.default_rng(12))
    ratio = np.log(ws2) + dp.kappa_y[:, None] * np.log(y2)  # ∝ exp(−κ_y ỹ*): constant
    assert ratio.std(axis=1) == pytest.approx([0, 0], abs=1e-9)


def test_chisquare_by_quantile_is_chi_square_and_continuous_in_df():
    from harness.models.wishart import chisquare_by_quantile, inverse_wishart_draw

    x = chisquare_by_quantile(np.full(50_000, 7.5), np.random.default_rng(0))
    assert x.mean() == pytest.approx(7.5, rel=0.01) and x.var() == pytest.approx(15.0, rel=0.03)
    assert stats.kstest(x, stats.chi2(7.5).cdf).pvalue > 1e-3
    a = chisquare_by_quantile(np.full(100, 30.0), np.random.default_rng(1))
    b = chisquare_by_quantile(np.full(100, 30.001), np.random.default_rng(1))
    assert np.abs(b - a).max() < 0.01 and (b > a).all()  # same seed: a small, monotone move
    scale = np.array([[2.0, 0.3], [0.3, 1.0]])
    s1 = inverse_wishart_draw(50.0, np.broadcast_to(scale, (20, 2, 2)), np.random.default_rng(2),
                              smooth_in_df=True)
    s2 = inverse_wishart_draw(50.001, np.broadcast_to(scale, (20, 2, 2)),
                              np.random.default_rng(2), smooth_in_df=True)
    assert np.abs(s2 - s1).max() < 1e-3
