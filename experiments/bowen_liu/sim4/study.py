"""Bowen & Liu (2020) Simulation 4 (§4.3.2; spec 000 §4.4, §6 items 18–23): the SLOMAG model
(sequential logistic regression with a marginal Gaussian) and model misspecification.

Data: z ~ N_2(0, Σ), σ1² = σ2² = 1, ρ = 0.5, each coordinate clamped to [−4, 4];
W1 | z ~ Bern(expit((1, z1, z2)β1)); W2 | z, W1 ~ Bern(expit((1, z1, z2, W1)β2));
W3 | z, W1, W2 multinomial logit on (1, z1, z2, W1, W2), level 1 the reference, β3 (level 2),
β4 (level 3); W1, W2 coded 0/1 in the predictors. Held as a RecordBatch with values (z1, z2) and
cells the 12 w-cells (``.model.encode_cells``: w1 fastest).

Methods: Ori; MS (SLOMAG, flat priors on the β's; ``MultipleSynthesis``); MODIPS-Correct
(``slomag_modips``); MODIPS-Wrong (the GLOM of Simulation 3 on the 12 w-cells, bounds [−4, 4];
``sigma_source`` within (as written) or marginal (reproduces Supp. Table 8)); NP-DIPS
(``cell_histogram`` with one query on the (w-cells × Scott z-bins) table, the marginal SD of z
and n_k = the w-cell count, spec §6 item 18).

Estimands: μ1, μ2, σ1², σ2², ρ of the marginal z (z̄ with s²/n, s² with (s²)²(2/(n−1) + κ/n),
r with (1 − r²)/(n − 2); spec §4.4, §6 item 16) and β1 (3), β2 (4), β3 (5), β4 (5) by Firth
logistic regression (W3 by two baseline-category Firth fits, spec §6 item 22) with their
variances; pooled by the partial-synthesis rule. A singular Firth fit (a constant column, e.g. a
synthetic set without any W1 = 1) has no estimate: that set is dropped for those coefficients
(Simulation 3's m_e ≤ m rule). A fit that stops at logistf's 25 iterations keeps its estimate, as
logistf does (a warning only); the share of such fits is a per-replicate metric
(``nonconv_<regression>``) and the figures leave out the β's of the MODIPS methods at the ln ε the
paper does not plot (``not_plotted`` in the config).
"""

from __future__ import annotations

import numpy as np

from harness.data import RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.evaluation import IntervalOutput
from harness.inference import COMBINING_RULES
from harness.inference.estimators import sample_mean_and_variance
from harness.inference.firth import firth_baseline_category, firth_logistic
from harness.models import GeneralLocationModel
from harness.models.logistic import predictive_draw
from harness.synthesizers import make_synthesizer

from ...common import as_number
from . import synthesizer  # noqa: F401  (registers slomag_modips)
from .model import N_CELLS, SlomagModel, decode_cells, designs, encode_cells

BETAS = {"beta1": 3, "beta2": 4, "beta3": 5, "beta4": 5}
MOMENTS = ("mu1", "mu2", "sigma1_sq", "sigma2_sq", "rho")
#: the Firth regressions whose non-convergence is recorded (W3: the two contrasts)
FITS = ("w1", "w2", "w3_2v1", "w3_3v1")
SIGMA_SOURCES = ("within", "marginal")


def beta_names() -> list[str]:
    return [f"{b}_{i}" for b, p in BETAS.items() for i in range(p)]


def analyse_sets(values: np.ndarray, cells: np.ndarray):
    """Estimates and within-set variances (…, 22) of sets with records (…, n, 2) and w-cells
    (…, n), and the Firth flags: converged (…, 4) and singular (…, 4), in ``FITS`` order."""
    n = values.shape[-2]
    z = np.moveaxis(values, -1, -2)  # (…, 2, n)
    mean, mean_var, s2, s2_var = sample_mean_and_variance(z)
    d = z - mean[..., None]
    cov12 = np.einsum("...n,...n->...", d[..., 0, :], d[..., 1, :]) / (n - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov12 / np.sqrt(s2[..., 0] * s2[..., 1])
    r_var = (1.0 - r * r) / (n - 2)
    w1, w2, w3 = decode_cells(cells)
    x1, x2, x3 = designs(values, w1, w2)
    f1 = firth_logistic(x1, w1)
    f2 = firth_logistic(x2, w2)
    f3 = firth_baseline_category(x3, w3, 3)  # (…, 2, 5)
    fits = [(f1.coef, f1.variance, f1.singular), (f2.coef, f2.variance, f2.singular),
            (f3.coef[..., 0, :], f3.variance[..., 0, :], f3.singular[..., 0]),
            (f3.coef[..., 1, :], f3.variance[..., 1, :], f3.singular[..., 1])]
    est = [mean, s2, r[..., None]]
    var = [mean_var, s2_var, r_var[..., None]]
    for coef, v, sing in fits:
        est.append(np.where(sing[..., None], np.nan, coef))
        var.append(np.where(sing[..., None], np.nan, v))
    converged = np.stack([f1.converged, f2.converged, f3.converged[..., 0],
                          f3.converged[..., 1]], axis=-1)
    singular = np.stack([f1.singular, f2.singular, f3.singular[..., 0], f3.singular[..., 1]],
                        axis=-1)
    return np.concatenate(est, axis=-1), np.concatenate(var, axis=-1), converged, singular


class Simulation4(Study):
    # n ≥ 3: the variance of the correlation estimate, (1 − r²)/(n − 2), needs n > 2
    grid_rules = {"n": {"integer": True, "minimum": 3}}
    extra_keys = ("sigma", "rho", "bounds", "beta", "slomag", "glom", "not_plotted")

    def validate(self) -> None:
        c = self.config
        for key, p in BETAS.items():
            if len(c["beta"][key]) != p:
                raise ConfigError(f"study.beta.{key}: needs {p} values, got {len(c['beta'][key])}")
        if not -1 < float(c["rho"]) < 1:
            raise ConfigError(f"study.rho: must lie in (-1, 1), got {c['rho']}")
        lo, hi = (float(b) for b in c["bounds"])
        if not hi > lo:
            raise ConfigError("study.bounds: need lower < upper")
        if c.get("combining_rule", "partial") not in COMBINING_RULES:
            raise allowed("study.combining_rule", c.get("combining_rule"), COMBINING_RULES)
        if not as_number("study.slomag.lambda", c["slomag"]["lambda"]) > 0:
            raise ConfigError("study.slomag.lambda: must be > 0")

    # --- constants ---------------------------------------------------------------------------
    def sigma(self) -> np.ndarray:
        s = np.asarray(self.config["sigma"], dtype=float)
        rho = float(self.config["rho"])
        return np.array([[s[0] ** 2, rho * s[0] * s[1]], [rho * s[0] * s[1], s[1] ** 2]])

    def beta(self, key: str) -> np.ndarray:
        return np.asarray(self.config["beta"][key], dtype=float)

    def bounds(self) -> tuple[float, float]:
        lo, hi = (float(b) for b in self.config["bounds"])
        return lo, hi

    # --- the study proper ---------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        """R data sets of the SLOMAG DGP (spec §4.4)."""
        n = int(scenario["n"])
        lo, hi = self.bounds()
        chol = np.linalg.cholesky(self.sigma())
        z = np.clip(rng.standard_normal((n_replicates, n, 2)) @ chol.T, lo, hi)
        one = np.ones((n_replicates, n, 1))
        x1 = np.concatenate([one, z], axis=-1)
        w1 = predictive_draw(x1, self.beta("beta1"), rng)
        x2 = np.concatenate([x1, w1[..., None].astype(float)], axis=-1)
        w2 = predictive_draw(x2, self.beta("beta2"), rng)
        x3 = np.concatenate([x2, w2[..., None].astype(float)], axis=-1)
        w3 = predictive_draw(x3, np.stack([self.beta("beta3"), self.beta("beta4")]), rng,
                             n_categories=3)
        return RecordBatch(z, encode_cells(w1, w2, w3), N_CELLS, ("z1", "z2"))

    def estimands(self, scenario):
        s = np.asarray(self.config["sigma"], dtype=float)
        truth = {"mu1": 0.0, "mu2": 0.0, "sigma1_sq": s[0] ** 2, "sigma2_sq": s[1] ** 2,
                 "rho": float(self.config["rho"])}
        for key, p in BETAS.items():
            truth.update({f"{key}_{i}": float(v) for i, v in zip(range(p), self.beta(key),
                                                                  strict=True)})
        return {k: float(v) for k, v in truth.items()}

    def analyse(self, sets: RecordBatch, scenario):
        """The Firth analyses of every set, with per-set fit flags as metric rows (per
        replicate: the share of the pooled sets whose fit did not converge, or was singular)."""
        est, var, converged, singular = analyse_sets(sets.values, sets.cells)
        flags = {
            **{f"nonconv_{f}": ~converged[..., i] for i, f in enumerate(FITS)},
            **{f"singular_{f}": singular[..., i] for i, f in enumerate(FITS)},
        }
        return IntervalOutput(est, var, metrics=flags)

    # --- methods -----------------------------------------------------------------------------
    def slomag_model(self, prior: bool) -> SlomagModel:
        lo, hi = self.bounds()
        s = self.config["slomag"]
        lam = as_number("study.slomag.lambda", s["lambda"]) if prior else 0.0
        return SlomagModel(lo, hi, prior_precision=lam, n_steps=int(s.get("n_steps", 25)))

    def glom_model(self, sigma_source: str) -> GeneralLocationModel:
        g = self.config.get("glom", {})
        lo, hi = self.bounds()
        if sigma_source not in SIGMA_SOURCES:
            raise allowed("glom_sigma_source", sigma_source, SIGMA_SOURCES)
        return GeneralLocationModel(
            np.full((N_CELLS, 2), lo), np.full((N_CELLS, 2), hi),
            alpha=as_number("study.glom.alpha", g.get("alpha", 0.5)),
            count_sensitivity=float(g.get("count_sensitivity", 1.0)),
            sigma_source=sigma_source,
        )

    def tabular_schema(self, scenario):
        """z1, z2 on the public bounds, for the benchmark's data interface."""
        from harness.schema import Numeric, Schema

        return Schema(tuple(Numeric(f"z{j + 1}", *self.bounds()) for j in range(2)))

    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        key = f"study.roster.{label}"
        if name == "ms":
            params["model"] = self.slomag_model(prior=False)
        elif name == "slomag_modips":
            params["model"] = self.slomag_model(prior=True)
        elif name == "modips":
            params["model"] = self.glom_model(params.pop("glom_sigma_source", "within"))
        elif name == "cell_histogram":
            lo, hi = self.bounds()
            params.update(lower=np.full((1, 2), lo), upper=np.full((1, 2), hi))
        return make_synthesizer(name, key=key, **params)


STUDY_CLASS = Simulation4
