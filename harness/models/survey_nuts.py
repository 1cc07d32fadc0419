"""A NUTS engine (numpyro) for the two survey models of ``harness.models.survey``: the same
α-weighted pseudo likelihoods, sampled by the No-U-Turn sampler under the priors of the
paper's supplement instead of the vague conjugate priors of the exact engine (Hu, Savitsky &
Williams Supplement C–D; spec 002 §3.2, §4.3, §11.5). Optional: it needs the extra
``dips-harness[nuts]`` (numpyro and JAX, CPU only).

The models return the same draw objects as the conjugate engine (:class:`SampleDraws`,
:class:`PopulationDraws`), so record log likelihoods, Lipschitz bounds, tuning and synthesis are
the exact engine's code. The pseudo likelihood is one factor Σ_i α_i log p(z_i | x_i, θ) (Eq. 1,
3, 7).

* **Sample model** (Eq. 2), prior ``lkj_half_t`` (Supplement C, Eqs. 14–16):
  β_y ~ MVN_K(0, diag(σ_βy) Ω_β diag(σ_βy)), β_w ~ MVN_K(0, diag(σ_βw) Ω_β diag(σ_βw)) with a
  shared Ω_β ~ LKJ(``lkj_shape``) on its Cholesky factor, every scale half-Student-t
  (``scale_df``, 0, ``scale_scale``); Σ = diag(σ_Σ) Ω_Σ diag(σ_Σ), Ω_Σ ~ LKJ(``lkj_shape``),
  σ_Σ half-t as above. The coefficients are sampled, by default (``coefficients:
  conditional``), as vec B = μ + R⁻ᵀθ, μ and RRᵀ the mean and precision of B's Gaussian
  conditional posterior given the scales, Ω_β and Σ: a change of variables with its Jacobian,
  so the same posterior as the centred form (``coefficients: centred``), without the latter's
  divergent transitions (its scales reach below the coefficients' standard errors, a funnel).
  Prior ``conjugate``: the exact engine's prior (flat B,
  Σ ~ IW(``prior_df``, ``prior_scale``·I)), written on the Cholesky factor C of Σ with the
  Jacobian |∂Σ/∂C| = 4 c₁₁² c₂₂ (d = 2).
* **Population model** (Eqs. 4–6), prior ``normal_half_cauchy`` (Supplement D, Eqs. 17–19):
  β, κ_y, κ_x independent N(0, ``coef_sd``²), σ_y, σ_π half-Cauchy(``sigma_scale``); prior
  ``conjugate``: the exact engine's (flat β, κ; p(σ²) ∝ σ⁻² for both variances, i.e. p(σ) ∝ 1/σ;
  the map (γ, δ) → (β, κ_x) of the exact engine has unit Jacobian). The π regression is
  sampled in centred form, κ_y(ỹ − ȳ) + xη with η = κ_x + κ_y ȳ c (Xc = 1), a unit-Jacobian
  linear map (spec §11.5: κ_y and the intercept of κ_x are otherwise correlated ≈ −0.999).

Randomness: a fit draws one integer from the numpy generator it is given (a stream derived as
in harness/rng.py) and uses it as the numpyro ``PRNGKey``; the same generator state gives the same
draws, so tuning refits keep common random numbers. Chains run sequentially (one core), with a
dense mass matrix adapted during warm-up and initial values at the α-weighted least-squares
estimates (the conditional form: θ = 0, B at its conditional mean; the target does not depend on
them). Computation is in float64.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError, allowed
from ..validation import check_number
from .survey import PopulationDraws, PopulationModel, SampleDraws, SampleModel
from .weighted_regression import ones_coefficients, weighted_least_squares

ENGINES = ("conjugate", "nuts")
SAMPLE_PRIORS = ("lkj_half_t", "conjugate")
POPULATION_PRIORS = ("normal_half_cauchy", "conjugate")
INSTALL = "pip install 'dips-harness[nuts]'"


def numpyro_available() -> bool:
    try:
        import numpyro  # noqa: F401
    except ImportError:
        return False
    return True


def require_numpyro(key: str = "engine") -> None:
    """A one-line ConfigError naming the extra when numpyro cannot be imported."""
    if not numpyro_available():
        raise ConfigError(f"{key}: 'nuts' needs numpyro, the optional extra 'nuts' ({INSTALL})")


@dataclass(frozen=True)
class NutsSettings:
    """Sampler settings: ``chains`` run one after the other, each ``warmup`` adaptation
    iterations then draws/chains kept draws; ``target_accept`` the step-size target."""

    chains: int = 1
    warmup: int = 1000
    target_accept: float = 0.9
    max_tree_depth: int = 10


SETTING_KEYS = ("chains", "warmup", "target_accept", "max_tree_depth")
#: the prior keys of each model's ``nuts`` mapping, its prior names first
PRIOR_KEYS = {"sample": (SAMPLE_PRIORS, ("lkj_shape", "scale_df", "scale_scale")),
              "population": (POPULATION_PRIORS, ("coef_sd", "sigma_scale"))}
#: how the sample model's ``lkj_half_t`` coefficients are sampled (``_conditional_coefficients``)
COEFFICIENT_FORMS = ("conditional", "centred")
#: each model's keys that name one of a few forms
CHOICE_KEYS = {"sample": {"coefficients": COEFFICIENT_FORMS}, "population": {}}


def nuts_options(options, draws: int, model: str, key: str = "nuts") -> tuple[NutsSettings,
                                                                               dict]:
    """(settings, prior keywords) of the ``model`` (``sample`` or ``population``) from a config
    mapping of sampler settings and prior keys; one-line ConfigErrors naming the key."""
    options = dict(options or {})
    priors, hyper = PRIOR_KEYS[model]
    choices = CHOICE_KEYS[model]
    known = SETTING_KEYS + ("prior",) + hyper + tuple(choices)
    for name in options:
        if name not in known:
            raise allowed(f"{key} key", name, known)
    chains = int(check_number(f"{key}.chains", options.get("chains", 1), integer=True,
                              minimum=1))
    if draws % chains:
        raise ConfigError(f"{key}.chains: draws = {draws} must be a multiple of chains = "
                          f"{chains}")
    settings = NutsSettings(
        chains, int(check_number(f"{key}.warmup", options.get("warmup", 1000), integer=True,
                                 minimum=1)),
        float(check_number(f"{key}.target_accept", options.get("target_accept", 0.9),
                           open_interval=(0.0, 1.0))),
        int(check_number(f"{key}.max_tree_depth", options.get("max_tree_depth", 10),
                         integer=True, minimum=1)))
    prior = {}
    if "prior" in options:
        if options["prior"] not in priors:
            raise allowed(f"{key}.prior", options["prior"], priors)
        prior["prior"] = options["prior"]
    for name, forms in choices.items():
        if name in options:
            if options[name] not in forms:
                raise allowed(f"{key}.{name}", options[name], forms)
            prior[name] = options[name]
    for name in hyper:
        if name in options:
            prior[name] = float(check_number(f"{key}.{name}", options[name],
                                             open_interval=(0.0, math.inf)))
    return settings, prior


# ---------------------------------------------------------------------------------- sampling


def _numpyro():
    require_numpyro()
    import numpyro

    numpyro.enable_x64()
    return numpyro


@functools.cache
def _mcmc(func, keywords: tuple, settings: NutsSettings, draws: int):
    """One MCMC object per (model, prior, settings, draws): its model arguments are traced, so
    refits with new data or weights of the same shapes reuse the compiled sampler (with
    :func:`_one_jit_per_loop` around the run)."""
    from numpyro.infer import MCMC, NUTS

    kernel = NUTS(functools.partial(func, **dict(keywords)), dense_mass=True,
                  target_accept_prob=settings.target_accept,
                  max_tree_depth=settings.max_tree_depth)
    return MCMC(kernel, num_warmup=settings.warmup, num_samples=draws // settings.chains,
                num_chains=settings.chains, chain_method="sequential", progress_bar=False,
                jit_model_args=True)


@functools.lru_cache(maxsize=32)
def _jit_once(jit, fn, args: tuple, options: tuple):
    """``jit(fn, *args, **options)``, made once per function and options (see
    :func:`_one_jit_per_loop`; bounded, as numpyro bounds its cache of loop bodies)."""
    return jit(fn, *args, **dict(options))


@contextlib.contextmanager
def _one_jit_per_loop():
    """Within the block, numpyro's ``maybe_jit`` returns the same jit wrapper for the same
    function and options. numpyro's ``fori_collect`` (0.22) wraps its cached loop body in a new
    ``jit`` on every run and passes that wrapper as a static argument of its jitted sampling
    loop: a new static argument is a cache miss, so every ``MCMC.run`` (and every chain of it)
    compiled the whole sampler again (~5 s of XLA per fit, against under 1 s of sampling),
    although numpyro caches the body and ``jit_model_args`` is meant to reuse it. With one
    wrapper per body, a refit with data of the same shapes reuses the compiled loop: the same
    computation, the same draws bit for bit (tests/harness/models/test_survey_nuts.py)."""
    import numpyro.util as util

    original = getattr(util, "maybe_jit", None)
    if original is None:  # another numpyro: its own behaviour
        yield
        return

    def maybe_jit(fn, *args, **kwargs):
        try:
            return _jit_once(original, fn, args, tuple(sorted(kwargs.items())))
        except TypeError:  # unhashable options: numpyro's own behaviour
            return original(fn, *args, **kwargs)

    util.maybe_jit = maybe_jit
    try:
        yield
    finally:
        util.maybe_jit = original


def run_nuts(func, keywords: dict, settings: NutsSettings, draws: int,
             rng: np.random.Generator, init: dict, **data) -> tuple[dict, dict]:
    """Draws of the model ``func(**data, **keywords)``: (every site as a numpy array with a
    leading axis of ``draws``, diagnostics: divergences, smallest effective sample size and
    largest split R-hat over the sites). ``init``: initial values of some sites (the others
    start uniformly in (−2, 2) on the unconstrained scale); every chain starts there, so with
    several chains R-hat checks mixing after warm-up, not dispersed starts."""
    _numpyro()
    import jax
    import jax.numpy as jnp
    from numpyro.diagnostics import summary
    from numpyro.infer.util import init_to_value, initialize_model

    mcmc = _mcmc(func, tuple(sorted(keywords.items())), settings, draws)
    key = jax.random.PRNGKey(int(rng.integers(2**31 - 1)))
    key_init, key_run = jax.random.split(key)
    args = {k: jnp.asarray(v) for k, v in data.items()}
    start = initialize_model(key_init, functools.partial(func, **keywords), model_kwargs=args,
                             init_strategy=init_to_value(values=init)).param_info.z
    if settings.chains > 1:
        start = jax.tree.map(lambda v: jnp.broadcast_to(v, (settings.chains, *v.shape)), start)
    with _one_jit_per_loop():
        mcmc.run(key_run, init_params=start, extra_fields=("diverging",), **args)
    samples = mcmc.get_samples(group_by_chain=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # constant sites (unit diagonals)
        stats = summary({k: np.asarray(v) for k, v in samples.items()}, group_by_chain=True)
    diag = {
        "divergences": int(np.asarray(mcmc.get_extra_fields()["diverging"]).sum()),
        "min_ess": float(min(np.nanmin(s["n_eff"]) for s in stats.values())),
        "max_rhat": float(max(np.nanmax(s["r_hat"]) for s in stats.values())),
    }
    flat = {k: np.asarray(v).reshape(draws, *np.shape(v)[2:]) for k, v in samples.items()}
    return flat, diag


# ---------------------------------------------------------------------------------- sample


def _sample_model_fn(x, z, alpha, gram, cross, *, prior, lkj_shape, scale_df, scale_scale,
                     prior_df, prior_scale, coefficients="conditional"):
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    k = x.shape[1]
    if prior == "lkj_half_t":
        def half_t(size):
            return dist.FoldedDistribution(
                dist.StudentT(scale_df, jnp.zeros(size), scale_scale)).to_event(1)

        l_beta = numpyro.sample("L_beta", dist.LKJCholesky(k, lkj_shape))
        sd_y = numpyro.sample("sd_beta_y", half_t(k))
        sd_w = numpyro.sample("sd_beta_w", half_t(k))
        l_sigma = numpyro.sample("L_Sigma", dist.LKJCholesky(2, lkj_shape))
        sd_sigma = numpyro.sample("sd_Sigma", half_t(2))
        chol = sd_sigma[:, None] * l_sigma
        if coefficients == "centred":
            beta_y = numpyro.sample("beta_y", dist.MultivariateNormal(
                jnp.zeros(k), scale_tril=sd_y[:, None] * l_beta))
            beta_w = numpyro.sample("beta_w", dist.MultivariateNormal(
                jnp.zeros(k), scale_tril=sd_w[:, None] * l_beta))
        else:
            beta_y, beta_w = _conditional_coefficients(gram, cross, chol, l_beta, sd_y, sd_w)
    else:
        flat = dist.ImproperUniform(constraints.real_vector, (), (k,))
        beta_y = numpyro.sample("beta_y", flat)
        beta_w = numpyro.sample("beta_w", flat)
        chol = numpyro.sample("chol_Sigma",
                              dist.ImproperUniform(constraints.lower_cholesky, (), (2, 2)))
        c11, c22 = chol[0, 0], chol[1, 1]
        inv = jnp.linalg.inv(chol)
        log_det = 2.0 * (jnp.log(c11) + jnp.log(c22))
        # IW(ν, sI) density of Σ = CCᵀ, times the Jacobian 4 c11² c22 of C ↦ CCᵀ
        numpyro.factor("prior_Sigma", -0.5 * (prior_df + 3.0) * log_det
                       - 0.5 * prior_scale * jnp.sum(inv * inv)
                       + 2.0 * jnp.log(c11) + jnp.log(c22))
    numpyro.deterministic("chol", chol)
    mean = jnp.stack([x @ beta_y, x @ beta_w], axis=-1)
    loglik = dist.MultivariateNormal(mean, scale_tril=chol).log_prob(z)
    numpyro.factor("pseudo_likelihood", jnp.sum(alpha * loglik))


def _conditional_coefficients(gram, cross, chol, l_beta, sd_y, sd_w):
    """B = (β_y, β_w) under the prior β_· ~ MVN(0, diag(σ_·) Ω_β diag(σ_·)), sampled as
    vec B = μ + R⁻ᵀ θ with θ flat: given the scales, Ω_β and Σ, the α-weighted likelihood of B
    is Gaussian (precision Σ⁻¹ ⊗ XᵀAX, ``gram``; linear term vec(XᵀAZ Σ⁻¹), ``cross``) and so
    is its posterior, with precision Q = RRᵀ = Σ⁻¹ ⊗ XᵀAX + blockdiag(prior precisions) and mean
    μ = Q⁻¹ vec(XᵀAZ Σ⁻¹). The target is the centred model's density times the Jacobian
    |∂B/∂θ| = Π_j 1/R_jj (a change of variables: same prior, same likelihood), and θ given the
    other parameters is exactly N(0, I): no funnel between a coefficient and its scale, whether
    the data or the prior dominates it (the centred form's scales reach below the coefficients'
    standard errors, where it diverges; a non-centred β = σθ fails the other way)."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from jax.scipy.linalg import block_diag, cho_solve, solve_triangular
    from numpyro.distributions import constraints

    k = gram.shape[0]
    sigma_inv = cho_solve((chol, True), jnp.eye(2))
    omega_inv = cho_solve((l_beta, True), jnp.eye(k))
    q = (jnp.kron(sigma_inv, gram) + block_diag(omega_inv / jnp.outer(sd_y, sd_y),
                                                 omega_inv / jnp.outer(sd_w, sd_w)))
    r = jnp.linalg.cholesky(q)
    mean = cho_solve((r, True), (cross @ sigma_inv).T.reshape(-1))  # vec: columns stacked
    theta = numpyro.sample("beta_std", dist.ImproperUniform(constraints.real_vector, (),
                                                            (2 * k,)))
    vec_b = mean + solve_triangular(r.T, theta, lower=False)
    beta_y = numpyro.deterministic("beta_y", vec_b[:k])
    beta_w = numpyro.deterministic("beta_w", vec_b[k:])
    numpyro.factor("prior_beta", dist.MultivariateNormal(
        jnp.zeros(k), scale_tril=sd_y[:, None] * l_beta).log_prob(beta_y)
        + dist.MultivariateNormal(jnp.zeros(k), scale_tril=sd_w[:, None] * l_beta).log_prob(
            beta_w) - jnp.sum(jnp.log(jnp.diagonal(r))))
    return beta_y, beta_w


@dataclass(frozen=True)
class NutsSampleDraws(SampleDraws):
    diagnostics: dict = field(default_factory=dict)


@dataclass(frozen=True)
class NutsSampleModel(SampleModel):
    """:class:`SampleModel` fitted by NUTS (see the module docstring); ``prior_df`` and
    ``prior_scale`` are the IW prior of ``prior="conjugate"``."""

    settings: NutsSettings = NutsSettings()
    prior: str = "lkj_half_t"
    lkj_shape: float = 1.0
    scale_df: float = 3.0
    scale_scale: float = 10.0
    #: how ``lkj_half_t`` samples the coefficients: ``conditional`` (the default, see
    #: ``_conditional_coefficients``) or ``centred`` as Supplement C writes the prior
    coefficients: str = "conditional"

    def __post_init__(self):
        if self.prior not in SAMPLE_PRIORS:
            raise allowed("nuts.prior", self.prior, SAMPLE_PRIORS)
        if self.coefficients not in COEFFICIENT_FORMS:
            raise allowed("nuts.coefficients", self.coefficients, COEFFICIENT_FORMS)

    def _prior(self) -> dict:
        return {"prior": self.prior, "lkj_shape": self.lkj_shape, "scale_df": self.scale_df,
                "scale_scale": self.scale_scale, "prior_df": self.prior_df,
                "prior_scale": self.prior_scale, "coefficients": self.coefficients}

    def fit(self, x, response, alpha, draws: int, rng) -> NutsSampleDraws:
        alpha = np.asarray(alpha, dtype=float)
        coef, *_ = weighted_least_squares(x, response, alpha)
        conditional = self.prior == "lkj_half_t" and self.coefficients == "conditional"
        # the conditional form starts θ = 0, B at its conditional mean
        init = ({"beta_std": np.zeros(coef.size)} if conditional
                else {"beta_y": coef[:, 0], "beta_w": coef[:, 1]})
        s, diag = run_nuts(_sample_model_fn, self._prior(), self.settings, draws, rng, init,
                           x=x, z=response, alpha=alpha, gram=x.T @ (alpha[:, None] * x),
                           cross=x.T @ (alpha[:, None] * response))
        chol = s["chol"]
        return NutsSampleDraws(np.stack([s["beta_y"], s["beta_w"]], axis=-1),
                               chol @ np.swapaxes(chol, -1, -2), diag)


# ---------------------------------------------------------------------------------- population


def _population_model_fn(x, log_y, t, alpha, ybar, c, *, prior, coef_sd, sigma_scale):
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    k = x.shape[1]
    real, vector = (dist.ImproperUniform(constraints.real, (), ()),
                    dist.ImproperUniform(constraints.real_vector, (), (k,)))
    if prior == "normal_half_cauchy":
        beta = numpyro.sample("beta", dist.Normal(jnp.zeros(k), coef_sd).to_event(1))
        sigma_y = numpyro.sample("sigma_y", dist.HalfCauchy(sigma_scale))
        sigma_pi = numpyro.sample("sigma_pi", dist.HalfCauchy(sigma_scale))
    else:
        positive = dist.ImproperUniform(constraints.positive, (), ())
        beta = numpyro.sample("beta", vector)
        sigma_y = numpyro.sample("sigma_y", positive)
        sigma_pi = numpyro.sample("sigma_pi", positive)
        numpyro.factor("prior_sigma", -jnp.log(sigma_y) - jnp.log(sigma_pi))
    kappa_y = numpyro.sample("kappa_y", real)
    eta = numpyro.sample("kappa_x_centred", vector)
    kappa_x = numpyro.deterministic("kappa_x", eta - kappa_y * ybar * c)
    if prior == "normal_half_cauchy":
        numpyro.factor("prior_kappa", dist.Normal(0.0, coef_sd).log_prob(kappa_y)
                       + dist.Normal(0.0, coef_sd).log_prob(kappa_x).sum())
    xb, xk = x @ beta, x @ kappa_x
    sy2, sp2 = sigma_y**2, sigma_pi**2
    # literal log Eq. 6 (the record constant of ``loglik_measure="log_pi"`` does not involve θ)
    loglik = (dist.Normal(kappa_y * (log_y - ybar) + x @ eta, sigma_pi).log_prob(t)
              + dist.Normal(xb, sigma_y).log_prob(log_y)
              - (xk + 0.5 * sp2 + kappa_y * xb + 0.5 * kappa_y**2 * sy2))
    numpyro.factor("pseudo_likelihood", jnp.sum(alpha * loglik))


@dataclass(frozen=True)
class NutsPopulationDraws(PopulationDraws):
    diagnostics: dict = field(default_factory=dict)


@dataclass(frozen=True)
class NutsPopulationModel(PopulationModel):
    """:class:`PopulationModel` fitted by NUTS (see the module docstring)."""

    settings: NutsSettings = NutsSettings()
    prior: str = "normal_half_cauchy"
    coef_sd: float = 10.0
    sigma_scale: float = 1.0

    def __post_init__(self):
        super().__post_init__()
        if self.prior not in POPULATION_PRIORS:
            raise allowed("nuts.prior", self.prior, POPULATION_PRIORS)

    def _prior(self) -> dict:
        return {"prior": self.prior, "coef_sd": self.coef_sd, "sigma_scale": self.sigma_scale}

    def fit(self, x, response, alpha, draws: int, rng) -> NutsPopulationDraws:
        log_y, t = response[:, 0], response[:, 1]
        alpha = np.asarray(alpha, dtype=float)
        ybar = float(np.sum(alpha * log_y) / np.sum(alpha))
        c = ones_coefficients(x)
        gamma, *_ = weighted_least_squares(x, log_y[:, None], alpha)
        delta, *_ = weighted_least_squares(np.column_stack([log_y - ybar, x]), t[:, None],
                                           alpha)
        init = {"beta": gamma[:, 0], "kappa_y": delta[0, 0], "kappa_x_centred": delta[1:, 0]}
        s, diag = run_nuts(_population_model_fn, self._prior(), self.settings, draws, rng,
                           init, x=x, log_y=log_y, t=t, alpha=alpha, ybar=ybar, c=c)
        return NutsPopulationDraws(s["beta"], s["sigma_y"] ** 2, s["kappa_y"], s["kappa_x"],
                                   s["sigma_pi"] ** 2, diag)
