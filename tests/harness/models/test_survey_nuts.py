"""The NUTS engine of the survey models (harness.models.survey_nuts): under the conjugate
engine's own priors it samples the same α-weighted pseudo posterior as the exact draws, within
Monte Carlo error; it is chosen by config, reproducible from the harness seed, and a one-line
error names the extra when numpyro is missing."""

import contextlib
import sys

import numpy as np
import pytest

from harness.errors import ConfigError
from harness.models.survey import PopulationModel, SampleModel
from harness.models.weighted_regression import design_matrix
from harness.synthesizers import make_synthesizer

pytest.importorskip("numpyro")

from harness.models.survey_nuts import (  # noqa: E402
    NutsPopulationModel,
    NutsSampleModel,
    NutsSettings,
)

EXACT_DRAWS = 4000
NUTS_DRAWS = 400
SETTINGS = NutsSettings(warmup=200)


def _data(seed=0, n=200):
    """A small informative sample (salary-like log y, weights falling with y), with α weights
    of mean ≈ 0.6: ignoring them would shrink posterior SDs by ≈ 1.3×, beyond the tolerance."""
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, 4, n), rng.integers(0, 2, n)], axis=-1)
    x = design_matrix(codes, (4, 2))
    log_y = 11.5 + x @ rng.normal(0, 0.2, x.shape[1]) + 0.4 * rng.standard_normal(n)
    log_w = 4.0 - 0.8 * (log_y - 11.5) + 0.4 * rng.standard_normal(n)
    alpha = rng.uniform(0.2, 1.0, n)
    return x, log_y, np.exp(log_w), alpha


def _flat(draws):
    if hasattr(draws, "coef"):
        return np.concatenate([draws.coef.reshape(len(draws.coef), -1),
                               draws.cov.reshape(len(draws.cov), -1)[:, [0, 1, 3]]], axis=1)
    return np.column_stack([draws.beta, draws.sigma_y2, draws.kappa_y, draws.kappa_x,
                            draws.sigma_pi2])


@contextlib.contextmanager
def compilations():
    """The XLA compilations that JAX reports while the block runs (one entry each)."""
    import jax.monitoring

    seen = []

    def listen(event, seconds, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            seen.append(seconds)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield seen
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)


@pytest.mark.parametrize("exact, nuts", [
    (SampleModel(), NutsSampleModel(settings=SETTINGS, prior="conjugate")),
    (PopulationModel(), NutsPopulationModel(settings=SETTINGS, prior="conjugate")),
], ids=["FBS", "FBP"])
def test_nuts_samples_the_conjugate_pseudo_posterior_within_monte_carlo_error(exact, nuts):
    x, log_y, w, alpha = _data()
    response = exact.response(log_y, w)
    a = _flat(exact.fit(x, response, alpha, EXACT_DRAWS, np.random.default_rng(1)))
    d = nuts.fit(x, response, alpha, NUTS_DRAWS, np.random.default_rng(2))
    b = _flat(d)
    ess = d.diagnostics["min_ess"]
    z = (b.mean(0) - a.mean(0)) / np.sqrt(a.var(0) / EXACT_DRAWS + b.var(0) / ess)
    ratio = b.std(0) / a.std(0)
    print(f"\nexact means {np.round(a.mean(0), 3)}\nNUTS means  {np.round(b.mean(0), 3)}"
          f"\nz {np.round(z, 2)}\nSD ratio {np.round(ratio, 3)}\n{d.diagnostics}")
    assert d.diagnostics["divergences"] == 0 and d.diagnostics["max_rhat"] < 1.05
    assert ess > 100
    # ~20 parameters: P(max |z| > 4) ≈ 0.001; SD ratios: relative SE ≈ 1/√(2·ESS) ≤ 0.07
    assert np.abs(z).max() < 4.0
    assert 0.75 < ratio.min() and ratio.max() < 1.33
    # the record log likelihoods (hence Δ_i) agree: same model, same data
    risk_a = np.abs(exact.loglik(exact.fit(x, response, alpha, NUTS_DRAWS,
                                           np.random.default_rng(3)), x, response)).max(0)
    risk_b = np.abs(exact.loglik(d, x, response)).max(0)
    assert np.corrcoef(risk_a, risk_b)[0, 1] > 0.9
    if isinstance(nuts, NutsPopulationModel):
        # reproducible from the generator's state, and a refit reuses the compiled sampler
        # (numpyro 0.22 compiled it again on every run: ~7 s of XLA per fit)
        with compilations() as compiled:
            again = nuts.fit(x, response, alpha, NUTS_DRAWS, np.random.default_rng(2))
        assert np.array_equal(_flat(again), b)
        assert compiled == [], f"the refit compiled {len(compiled)} times ({sum(compiled):.1f} s)"


def test_engine_is_chosen_by_config():
    fbs = make_synthesizer("fbs", engine="nuts", draws=10,
                           nuts={"warmup": 5, "prior": "lkj_half_t", "lkj_shape": 6})
    assert isinstance(fbs.model(), NutsSampleModel) and fbs.model().lkj_shape == 6.0
    assert fbs.model().coefficients == "conditional"
    centred = make_synthesizer("fbs", engine="nuts", nuts={"coefficients": "centred"})
    assert centred.model().coefficients == "centred"
    fbp = make_synthesizer("fbp", engine="nuts", draws=10, nuts={"chains": 2, "coef_sd": 10})
    model = fbp.model()
    assert isinstance(model, NutsPopulationModel) and model.settings.chains == 2
    assert model.prior == "normal_half_cauchy" and model.pi_scale == "mean1"
    assert type(make_synthesizer("fbs").model()) is SampleModel


@pytest.mark.parametrize("params, message", [
    ({"engine": "stan"}, "engine: 'stan' is not allowed (allowed: conjugate, nuts)"),
    ({"engine": "nuts", "nuts": {"coef_sd": 10}},
     "nuts key: 'coef_sd' is not allowed (allowed: chains, warmup"),
    ({"engine": "nuts", "nuts": {"prior": "flat"}},
     "nuts.prior: 'flat' is not allowed (allowed: lkj_half_t, conjugate)"),
    ({"engine": "nuts", "draws": 10, "nuts": {"chains": 3}},
     "nuts.chains: draws = 10 must be a multiple of chains = 3"),
    ({"engine": "nuts", "nuts": {"lkj_shape": 0}}, "nuts.lkj_shape: must be a number in (0.0"),
    ({"engine": "nuts", "nuts": {"coefficients": "raw"}},
     "nuts.coefficients: 'raw' is not allowed (allowed: conditional, centred)"),
    ({"nuts": {"warmup": 10}}, "nuts: sampler settings are for engine: nuts"),
])
def test_bad_engine_config_is_one_line(params, message):
    with pytest.raises(ConfigError, match=None) as info:
        make_synthesizer("fbs", **params)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_nuts_without_numpyro_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "numpyro", None)  # import numpyro raises ImportError
    with pytest.raises(ConfigError) as info:
        make_synthesizer("fbp", engine="nuts")
    assert str(info.value) == ("engine: 'nuts' needs numpyro, the optional extra 'nuts' "
                               "(pip install 'dips-harness[nuts]')")
    assert make_synthesizer("fbp").engine == "conjugate"  # the default needs no numpyro


def test_a_nuts_release_is_tuned_ledgered_and_reports_its_sampler(monkeypatch):
    """FBP through the synthesizer (prepare → tune → release) with ``engine: nuts``: the
    release is tuned and ledgered as with the exact engine and adds the tuned fit's sampler
    diagnostics. (The fit is the exact engine's draws labelled with diagnostics, so that this
    test of the wiring costs no sampling; the sampler itself is tested above.)"""
    from harness.data import RecordBatch
    from harness.models.survey_nuts import NutsPopulationDraws
    from harness.schema import Schema

    def labelled_fit(self, x, response, alpha, draws, rng):
        d = PopulationModel.fit(self, x, response, alpha, draws, rng)
        return NutsPopulationDraws(*(getattr(d, f) for f in ("beta", "sigma_y2", "kappa_y",
                                                             "kappa_x", "sigma_pi2")),
                                   {"divergences": 0, "min_ess": 321.0, "max_rhat": 1.002})

    monkeypatch.setattr(NutsPopulationModel, "fit", labelled_fit)
    x, log_y, w, _ = _data()
    schema = Schema.from_config({"columns": [
        {"name": "field", "levels": [1, 2, 3, 4]}, {"name": "gender", "levels": ["M", "F"]},
        {"name": "y", "bounds": [0.0, 1e8]}]})
    field = (x[:, 1:4] @ np.arange(1, 4)).astype(int)
    values = np.stack([field, x[:, 4], np.exp(log_y)], axis=-1)[None]
    data = RecordBatch(values, None, 1, schema.names, w[None], field[None], schema)
    synth = make_synthesizer("fbp", m=2, draws=NUTS_DRAWS, engine="nuts",
                             nuts={"warmup": SETTINGS.warmup, "prior": "conjugate"})
    prepared = synth.prepare(data, np.random.default_rng(1))
    rel = synth.release(data, 1.8, np.random.default_rng(2), prepared=prepared)
    assert rel.sets.values.shape == (1, 2, len(w), 3)
    assert rel.ledger.total_epsilon() == pytest.approx(2 * 1.8 * 2, rel=1e-12)
    assert 1.79 <= rel.diagnostics["lipschitz_realised"][0] <= 1.8
    assert [rel.diagnostics[f"nuts_{k}"][0] for k in ("divergences", "min_ess", "max_rhat")] \
        == [0, 321.0, 1.002]
    conjugate = make_synthesizer("fbp", m=2, draws=NUTS_DRAWS)
    plain = conjugate.release(data, 1.8, np.random.default_rng(2),
                              prepared=conjugate.prepare(data, np.random.default_rng(1)))
    assert "nuts_min_ess" not in plain.diagnostics
    assert np.array_equal(plain.sets.values, rel.sets.values)  # same draws, same release


def _paper_prior_point(k, rng):
    """A point of the FBS model under the paper's priors (all but the coefficients)."""
    chol_omega = np.linalg.cholesky(np.corrcoef(rng.standard_normal((k, 3 * k))))
    return {"L_beta": chol_omega, "sd_beta_y": rng.uniform(0.01, 3, k),
            "sd_beta_w": rng.uniform(0.01, 3, k),
            "L_Sigma": np.linalg.cholesky([[1, -0.6], [-0.6, 1]]),
            "sd_Sigma": np.array([0.4, 0.5])}


def test_conditional_fbs_coefficients_are_the_centred_model_by_change_of_variables():
    """Under the paper's priors FBS samples vec B = μ + R⁻ᵀθ (R the Cholesky factor of B's
    conditional precision, here rebuilt in numpy): at matched points its log density is the
    centred model's plus log |∂B/∂θ| = −Σ log R_jj, so both define one posterior; and θ = 0 is
    the centred density's mode in B given the other parameters. (The densities and the gradient
    are jitted, as the sampler evaluates them: run op by op, JAX compiled ~300 primitives one at
    a time, most of this test's time; jitted, three functions serve both points.)"""
    import jax
    import jax.numpy as jnp
    from numpyro.infer.util import log_density

    from harness.models.survey_nuts import _numpyro, _sample_model_fn

    _numpyro()  # float64, as the engine samples
    x, log_y, w, alpha = _data()
    model = NutsSampleModel(lkj_shape=6.0)
    z = model.response(log_y, w)
    k = x.shape[1]
    gram, cross = x.T @ (alpha[:, None] * x), x.T @ (alpha[:, None] * z)
    data = {"x": jnp.asarray(x), "z": jnp.asarray(z), "alpha": jnp.asarray(alpha),
            "gram": jnp.asarray(gram), "cross": jnp.asarray(cross)}
    centred_kw = {**data, **model._prior(), "coefficients": "centred"}
    conditional_kw = {**data, **model._prior()}

    @jax.jit
    def centred_lp(params):
        return log_density(_sample_model_fn, (), centred_kw, params)[0]

    @jax.jit
    def conditional_lp(params):
        lp, trace = log_density(_sample_model_fn, (), conditional_kw, params)
        return lp, trace["beta_y"]["value"]

    @jax.jit
    def centred_grad(b, point):
        return jax.grad(lambda b: centred_lp({**point, "beta_y": b[:k], "beta_w": b[k:]}))(b)

    rng = np.random.default_rng(4)
    for _ in range(2):
        point = _paper_prior_point(k, rng)
        chol = point["sd_Sigma"][:, None] * point["L_Sigma"]
        omega_inv = np.linalg.inv(point["L_beta"] @ point["L_beta"].T)
        sigma_inv = np.linalg.inv(chol @ chol.T)
        q = np.kron(sigma_inv, gram)
        for i, sd in enumerate((point["sd_beta_y"], point["sd_beta_w"])):
            q[i * k:(i + 1) * k, i * k:(i + 1) * k] += omega_inv / np.outer(sd, sd)
        r = np.linalg.cholesky(q)
        mean = np.linalg.solve(q, (cross @ sigma_inv).T.reshape(-1))
        theta = rng.standard_normal(2 * k)
        vec_b = mean + np.linalg.solve(r.T, theta)
        lp_c = centred_lp({**point, "beta_y": vec_b[:k], "beta_w": vec_b[k:]})
        lp_n, beta_y = conditional_lp({**point, "beta_std": theta})
        jacobian = -np.log(np.diag(r)).sum()
        print(f"\nlog p conditional {float(lp_n):.6f}, centred {float(lp_c):.6f}, "
              f"log Jacobian {jacobian:.6f}")
        assert np.allclose(beta_y, vec_b[:k], rtol=1e-10, atol=1e-10)
        assert float(lp_n) == pytest.approx(float(lp_c) + jacobian, rel=1e-12, abs=1e-8)
        grad = np.asarray(centred_grad(jnp.asarray(mean), point))
        assert np.abs(grad).max() < 1e-6 * np.abs(q).max()
