"""Risk-weighted pseudo-posterior synthesizers of survey microdata with weights (Hu, Savitsky &
Williams §2–§4): ``fbs`` (joint model of the observed sample, :class:`SampleModel`) and ``fbp``
(population model with the exact sample likelihood, :class:`PopulationModel`).

Input: a :class:`RecordBatch` with a schema, survey weights (> 0) and strata; the ``design``
columns (categorical; default: every categorical column of the schema) are kept as they are and
form the design matrix X (``design_x``: ``additive`` intercept + dummies, or ``interaction`` cell
means); the numeric ``outcome`` column (> 0) is modelled on the log scale jointly with the
weight. Output: M synthetic sets per replicate (axes (R, M, n, p)): the outcome replaced by y*,
the weights by the smoothed synthetic weights (``released_weights="smoothed"``, what the paper's
tables use; ``"synthesized"`` gives the drawn weights instead), design columns and strata kept.

Privacy parameter ``lipschitz_bound`` (the target Δ_α): the release tunes α so that the re-fitted
pseudo posterior's bound lies within ``tol`` below the target (``tune_risk_weights``) and claims
ε = 2·Δ·m, one ledger entry 2·Δ per set under substitution neighbours. The unweighted fit and
the record risks Δ_i do not depend on Δ: ``prepare`` computes them once per task. The M sets are
M distinct draws of the tuned fit's S draws, so pooling the first m ≤ M sets (nested m) is a
release of m sets with ε = 2·Δ·m.

Engine (``engine``): ``conjugate`` (default), exact i.i.d. draws under vague conjugate priors
(``harness.models.survey``), or ``nuts``, the No-U-Turn sampler of the same pseudo likelihood
under the priors given in the ``nuts`` mapping (sampler settings ``chains``, ``warmup``,
``target_accept``, ``max_tree_depth`` and the prior: ``harness.models.survey_nuts``; needs the
extra ``dips-harness[nuts]``). S = ``draws`` kept draws in both. With ``nuts`` the release's
diagnostics add the tuned fit's divergences, smallest ESS and largest split R-hat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..models.survey import LOGLIK_MEASURES, PI_SCALES, SMOOTHING, PopulationModel, SampleModel
from ..models.survey_nuts import (
    ENGINES,
    NutsPopulationModel,
    NutsSampleModel,
    nuts_options,
    require_numpyro,
)
from ..models.weighted_regression import DESIGN_FORMS, design_matrix
from ..privacy.ledger import SUBSTITUTION
from ..privacy.pseudo_posterior import (
    ALPHA_FORMS,
    record_pseudo_posterior_sets,
    record_risk,
    tune_risk_weights,
)
from ..validation import check_number
from .base import Synthesizer
from .registry import register

RELEASED_WEIGHTS = ("smoothed", "synthesized")
#: diagnostics of the tuned fit a release adds with ``engine: nuts``
NUTS_DIAGNOSTICS = ("nuts_divergences", "nuts_min_ess", "nuts_max_rhat")


@dataclass(frozen=True)
class SurveyColumns:
    """The columns a survey synthesizer reads from a batch's schema."""

    design: tuple[str, ...]
    design_index: tuple[int, ...]
    n_levels: tuple[int, ...]
    outcome_index: int


def survey_columns(data: RecordBatch, outcome: str, design) -> SurveyColumns:
    """Design and outcome columns of ``data`` (one-line ConfigErrors naming the key), after
    checking weights (> 0) and strata."""
    schema = data.schema
    if schema is None:
        raise ConfigError("schema: the survey synthesizers need a batch with a schema")
    if outcome not in schema.names:
        raise allowed("outcome", outcome, schema.names)
    if schema.column(outcome).kind != "numeric":
        raise ConfigError(f"outcome: column {outcome!r} must be numeric")
    names = tuple(c.name for c in schema.categorical) if design is None else tuple(design)
    for name in names:
        if name not in schema.names or schema.column(name).kind != "categorical":
            raise allowed("design", name, [c.name for c in schema.categorical])
    if not names:
        raise ConfigError("design: give at least one categorical design column")
    if data.weights is None:
        raise ConfigError("weights: the survey synthesizers need survey weights")
    if (data.weights <= 0).any():
        at = tuple(np.argwhere(data.weights <= 0)[0])
        raise ConfigError(f"weights: weight of record {at[-1]} is {data.weights[at]:g} (the "
                          f"models take log w: weights must be > 0)")
    y = data.values[..., schema.names.index(outcome)]
    if not (np.isfinite(y) & (y > 0)).all():
        i = int(np.argwhere(~(np.isfinite(y) & (y > 0)))[0][-1])
        raise ConfigError(f"outcome: value of record {i} is not a finite number > 0 "
                          f"(the models take log {outcome})")
    levels = tuple(len(schema.column(n).levels) for n in names)
    return SurveyColumns(names, tuple(schema.names.index(n) for n in names), levels,
                         schema.names.index(outcome))


@dataclass(frozen=True)
class PreparedFit:
    """The ε-free stage of one replicate: design, response, unweighted draws' record risks."""

    x: np.ndarray
    response: np.ndarray
    risk: np.ndarray  # Δ_i of the unweighted fit

    @property
    def unweighted_bound(self) -> float:
        return float(np.max(self.risk))


class _PseudoPosterior(Synthesizer):
    privacy_parameter = "lipschitz_bound"
    neighbour_relation = SUBSTITUTION
    uses_prepare = True
    input_kind: ClassVar[str] = "survey"

    def __init__(self, m: int = 1, draws: int = 1000, tol: float = 0.01,
                 alpha_form: str = "inv_clip", c2: float = 0.0, design_x: str = "additive",
                 outcome: str = "y", design=None, released_weights: str = "smoothed",
                 weight_total: float | None = None, max_refits: int = 30,
                 engine: str = "conjugate", nuts=None):
        super().__init__(m)
        self.draws = int(check_number("draws", draws, integer=True, minimum=self.m))
        self.tol = float(check_number("tol", tol, minimum=0.0))
        for key, value, choices in (("alpha_form", alpha_form, ALPHA_FORMS),
                                    ("design_x", design_x, DESIGN_FORMS),
                                    ("released_weights", released_weights, RELEASED_WEIGHTS)):
            if value not in choices:
                raise allowed(key, value, choices)
        self.alpha_form, self.design_x, self.released_weights = alpha_form, design_x, \
            released_weights
        self.c2 = float(check_number("c2", c2, minimum=0.0))
        self.outcome = str(outcome)
        self.design = None if design is None else tuple(design)
        self.weight_total = None if weight_total is None else float(
            check_number("weight_total", weight_total, minimum=0.0))
        self.max_refits = int(check_number("max_refits", max_refits, integer=True, minimum=3))
        if engine not in ENGINES:
            raise allowed("engine", engine, ENGINES)
        self.engine = engine
        if engine == "nuts":
            require_numpyro()
        elif nuts:
            raise ConfigError("nuts: sampler settings are for engine: nuts (engine is "
                              f"{engine!r})")
        self.nuts_settings, self.nuts_prior = nuts_options(nuts, self.draws, self.model_kind)

    def claimed_epsilon(self, privacy, data=None) -> float:
        return 2.0 * float(privacy) * self.m

    # --- the model -------------------------------------------------------------------------
    def model(self):
        raise NotImplementedError

    def _inputs(self, data: RecordBatch, r: int, cols: SurveyColumns):
        codes = data.values[r][:, list(cols.design_index)]
        x = design_matrix(codes, cols.n_levels, self.design_x)
        log_y = np.log(data.values[r][:, cols.outcome_index])
        return x, self.model().response(log_y, data.weights[r])

    def prepare(self, data: RecordBatch, rng) -> list[PreparedFit]:
        """Per replicate: the unweighted fit's S draws and the record risks Δ_i."""
        cols = survey_columns(data, self.outcome, self.design)
        model = self.model()
        out = []
        for r in range(data.n_replicates):
            x, response = self._inputs(data, r, cols)
            draws = model.fit(x, response, np.ones(x.shape[0]), self.draws, rng)
            out.append(PreparedFit(x, response, record_risk(model.loglik(draws, x, response))))
        return out

    def tune(self, fit: PreparedFit, lipschitz_bound: float, seed: int):
        """The tuned α-weighted fit of one replicate (``tune_risk_weights``)."""
        model = self.model()
        k = fit.x.shape[1] + 1  # the larger regression of either model
        return tune_risk_weights(
            lambda alpha, g: model.fit(fit.x, fit.response, alpha, self.draws, g),
            lambda d: model.loglik(d, fit.x, fit.response),
            fit.risk, lipschitz_bound, seed=seed, min_weight_sum=k + 5.0, c2=self.c2,
            form=self.alpha_form, tol=self.tol, max_refits=self.max_refits)

    def synthesize_sets(self, draws, fit: PreparedFit, w: np.ndarray, rng):
        """(y*, synthesized weights, smoothed weights), each (S', n): one synthetic set per
        draw of ``draws`` for the replicate of ``fit`` with confidential weights ``w``."""
        raise NotImplementedError

    def _release(self, data: RecordBatch, lipschitz_bound, ledger, rng, prepared):
        cols = survey_columns(data, self.outcome, self.design)
        r_count, n = data.n_replicates, data.n
        values = np.repeat(data.values[:, None], self.m, axis=1)
        weights = np.empty((r_count, self.m, n))
        keys = ("lipschitz_realised", "lipschitz_unweighted", "c1", "alpha_mean", "refits",
                "tuned") + (NUTS_DIAGNOSTICS if self.engine == "nuts" else ())
        diag = {k: np.empty(r_count) for k in keys}
        for r in range(r_count):
            fit = prepared[r]
            tuned = self.tune(fit, lipschitz_bound, int(rng.integers(2**63)))
            index = rng.choice(self.draws, size=self.m, replace=False)
            y, w_synth, w_smooth = self.synthesize_sets(tuned.draws.take(index), fit,
                                                    data.weights[r], rng)
            values[r, :, :, cols.outcome_index] = y
            weights[r] = w_smooth if self.released_weights == "smoothed" else w_synth
            for key, value in (("lipschitz_realised", tuned.bound),
                               ("lipschitz_unweighted", fit.unweighted_bound),
                               ("c1", tuned.c1), ("alpha_mean", tuned.alpha.mean()),
                               ("refits", tuned.refits), ("tuned", float(tuned.converged))):
                diag[key][r] = value
            for key in NUTS_DIAGNOSTICS if self.engine == "nuts" else ():
                diag[key][r] = tuned.draws.diagnostics[key.removeprefix("nuts_")]
        record_pseudo_posterior_sets(ledger, float(lipschitz_bound), self.m,
                                     float(diag["lipschitz_realised"].max()))
        strata = None if data.strata is None else np.repeat(data.strata[:, None], self.m, 1)
        sets = RecordBatch(values, None, 1, data.columns, weights, strata, data.schema)
        return sets, diag

    def _total(self, w: np.ndarray) -> float:
        return float(w.sum()) if self.weight_total is None else self.weight_total


@register
class FullyBayesSample(_PseudoPosterior):
    """FBS: bivariate normal pseudo posterior of (log y, log w) given X (§3), prior
    Σ ~ IW(prior_df, prior_scale·I); tables use the smoothed weights."""

    name = "fbs"
    model_kind = "sample"

    def __init__(self, m: int = 1, draws: int = 1000, tol: float = 0.01,
                 alpha_form: str = "inv_clip", c2: float = 0.0, design_x: str = "additive",
                 outcome: str = "y", design=None, released_weights: str = "smoothed",
                 weight_total: float | None = None, max_refits: int = 30,
                 prior_df: float = 4.0, prior_scale: float = 1e-3, engine: str = "conjugate",
                 nuts=None):
        super().__init__(m, draws, tol, alpha_form, c2, design_x, outcome, design,
                         released_weights, weight_total, max_refits, engine, nuts)
        self.prior_df = float(check_number("prior_df", prior_df, minimum=0.0))
        self.prior_scale = float(check_number("prior_scale", prior_scale, minimum=0.0))

    def model(self) -> SampleModel:
        if self.engine == "nuts":
            return NutsSampleModel(self.prior_df, self.prior_scale, self.nuts_settings,
                                   **self.nuts_prior)
        return SampleModel(self.prior_df, self.prior_scale)

    def synthesize_sets(self, draws, fit, w, rng):
        return self.model().synthesize(draws, fit.x, self._total(w), rng)


@register
class FullyBayesPopulation(_PseudoPosterior):
    """FBP: population model with the exact sample likelihood Eq. 6 (§4), fitted as two
    α-weighted regressions; y* from the population model, smoothed weights ∝ exp(−κ_y ỹ*)."""

    name = "fbp"
    model_kind = "population"

    def __init__(self, m: int = 1, draws: int = 1000, tol: float = 0.01,
                 alpha_form: str = "inv_clip", c2: float = 0.0, design_x: str = "additive",
                 outcome: str = "y", design=None, released_weights: str = "smoothed",
                 weight_total: float | None = None, max_refits: int = 30,
                 pi_scale: str = "mean1", loglik_measure: str = "eq6_literal",
                 smooth: str = "kappa_y_only", engine: str = "conjugate", nuts=None):
        super().__init__(m, draws, tol, alpha_form, c2, design_x, outcome, design,
                         released_weights, weight_total, max_refits, engine, nuts)
        for key, value, choices in (("pi_scale", pi_scale, PI_SCALES),
                                    ("loglik_measure", loglik_measure, LOGLIK_MEASURES),
                                    ("smooth", smooth, SMOOTHING)):
            if value not in choices:
                raise allowed(key, value, choices)
        self.pi_scale, self.loglik_measure, self.smooth = pi_scale, loglik_measure, smooth

    def model(self) -> PopulationModel:
        if self.engine == "nuts":
            return NutsPopulationModel(self.pi_scale, self.loglik_measure, self.smooth,
                                       self.nuts_settings, **self.nuts_prior)
        return PopulationModel(self.pi_scale, self.loglik_measure, self.smooth)

    def synthesize_sets(self, draws, fit, w, rng):
        return self.model().synthesize(draws, fit.x, self._total(w), rng, float(w.mean()))
