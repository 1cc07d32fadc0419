"""Does the exact conjugate engine stand in for the paper's NUTS fits? (spec 002 §11.5, issue 11)

On one simulated sample of the repeated-sampling design (n = 1000; ``population.py``), FBS and
FBP are fitted by three engines:

* ``conjugate``: the default, exact i.i.d. draws under vague conjugate priors (flat
  coefficients; FBS Σ ~ IW(4, 10⁻³ I), FBP p(σ²) ∝ σ⁻²);
* ``nuts``: NUTS under the paper's priors (Supplement C, Eqs. 14–16 for FBS; Supplement D,
  Eqs. 17–19 for FBP; ``PAPER_PRIORS``);
* ``nuts_conjugate_prior``: NUTS under the conjugate engine's priors, the same target as
  ``conjugate``: their differences are Monte Carlo error only, so the sampler and the weighted
  likelihood are checked apart from the priors.

Compared: posterior means and SDs of every parameter (unweighted and α-weighted), the record
risks Δ_i of the unweighted fit, the tuned c₁ and Δ_α, and the cell CIs of the Tables 4–5
estimates from the weighted fit (m = 3 sets; averaged over ``groups`` groups of m distinct
draws, so that the comparison is not swamped by synthesis noise). The conjugate engine tunes c₁
to Δ = 1.8; NUTS is fitted at the conjugate's tuned α (``nuts_conjugate_prior``: the same
target) or at its own α with the conjugate's c₁ (``nuts``: α from its own Δ_i), and its Δ_α
there tells whether its own tuning would land on the same c₁ (``implied_c1`` = c₁·Δ/Δ_α, as
Δ_α is close to proportional to c₁ under ``inv_clip``). NUTS's Δ_α(c₁) is not smooth in c₁
(a new α changes every trajectory), and a tuning run costs 6–12 fits, which the shared machine
could not afford for NUTS. The z-score of a parameter is the difference of
the posterior means over its Monte Carlo SE, √(sd_c²/S + sd_n²/ESS_n), with the NUTS ESS of the
least-mixed site; its shift is the same difference in conjugate posterior SDs (the size of a
prior's effect).

Seeds derive from the root seed (``harness.rng.generator``); the population is the
study's (seed 0). ``python -m experiments.hu_savitsky_williams.nuts_validation`` prints the
tables; ``harness report paper=hu_savitsky_williams`` collects them (``paper.py``).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from harness.inference.combine import combine
from harness.inference.survey import survey_table
from harness.models.survey import PopulationDraws, SampleDraws
from harness.models.weighted_regression import design_matrix
from harness.privacy.pseudo_posterior import lipschitz_bounds, record_risk, risk_weights
from harness.rng import generator
from harness.synthesizers import make_synthesizer
from harness.synthesizers.pseudo_posterior import PreparedFit

from .mc.study import DOMAINS, domain_label
from .population import FIELDS, GENDERS, draw_samples, make_population

NAME = "hu_savitsky_williams_nuts"
#: the paper's priors for the NUTS engine
PAPER_PRIORS = {
    # Supplement C, Eqs. 14-16: LKJ(6) on the Cholesky factors of Ω_β and Ω_Σ, every scale
    # half-Student-t with 3 d.f. and scale 10
    "fbs": {"prior": "lkj_half_t", "lkj_shape": 6.0, "scale_df": 3.0, "scale_scale": 10.0},
    # Supplement D, Eqs. 17-19: β, κ ~ MVN(0, 100 I); σ_y, σ_π ~ half-Cauchy(0, 1)
    "fbp": {"prior": "normal_half_cauchy", "coef_sd": 10.0, "sigma_scale": 1.0},
}
ENGINE_NAMES = ("conjugate", "nuts", "nuts_conjugate_prior")
MODELS = {"fbs": "FBS", "fbp": "FBP"}
SETTINGS = {
    "seed": 0, "population_seed": 0, "n": 1000, "lipschitz_bound": 1.8, "m": 3,
    "draws": 1000, "warmup": 500, "chains": 1, "groups": 100,
    # tuning: NUTS's Δ_α(c₁) is not smooth in c₁ (a new α changes every trajectory), so the
    # search is capped; the table reports each engine's refits and realised Δ_α
    "tol": 0.02, "max_refits": 12, "fresh_fits": 20,
    "engines": {"fbs": ("conjugate", "nuts", "nuts_conjugate_prior"),
                "fbp": ("conjugate", "nuts", "nuts_conjugate_prior")},
    "paper_priors": PAPER_PRIORS,
    # FBS under the paper's priors: coefficients sampled from their Gaussian conditional
    # (survey_nuts._conditional_coefficients; the centred form diverged, 31 and 67 of 1000)
    "fbs_coefficients": "conditional",
    # the study's analysis (conf/study/hu_savitsky_williams_mc.yaml)
    "fbp_count_variance": "unstratified", "fbp_mean_weights": "cell_constant",
}
COEF_NAMES = ("intercept", *(f"field{f}" for f in FIELDS[1:]), f"gender_{GENDERS[1]}")
#: the 24 cells of Tables 4-5 (interior cells and field totals)
CELLS = tuple(i for i, d in enumerate(DOMAINS.names) if not d.startswith("*"))


def synthesizer(model: str, engine: str, settings=SETTINGS):
    nuts = None
    if engine != "conjugate":
        prior = PAPER_PRIORS[model] if engine == "nuts" else {"prior": "conjugate"}
        nuts = {"warmup": settings["warmup"], "chains": settings["chains"], **prior}
        if model == "fbs" and engine == "nuts":
            nuts["coefficients"] = settings["fbs_coefficients"]
    return make_synthesizer(model, outcome="salary", m=settings["m"], draws=settings["draws"],
                            tol=settings["tol"], max_refits=settings["max_refits"],
                            engine="conjugate" if engine == "conjugate" else "nuts", nuts=nuts)


def parameters(draws) -> dict[str, np.ndarray]:
    """Every parameter's draws (S,) by name."""
    out = {}
    if isinstance(draws, SampleDraws):
        for j, part in enumerate(("beta_y", "beta_w")):
            out.update({f"{part}[{c}]": draws.coef[:, k, j] for k, c in enumerate(COEF_NAMES)})
        s = draws.cov
        out["sigma_y"], out["sigma_w"] = np.sqrt(s[:, 0, 0]), np.sqrt(s[:, 1, 1])
        out["rho"] = s[:, 0, 1] / np.sqrt(s[:, 0, 0] * s[:, 1, 1])
        return out
    assert isinstance(draws, PopulationDraws)
    out.update({f"beta[{c}]": draws.beta[:, k] for k, c in enumerate(COEF_NAMES)})
    out["sigma_y"] = np.sqrt(draws.sigma_y2)
    out["kappa_y"] = draws.kappa_y
    out.update({f"kappa_x[{c}]": draws.kappa_x[:, k] for k, c in enumerate(COEF_NAMES)})
    out["sigma_pi"] = np.sqrt(draws.sigma_pi2)
    return out


def _ess(draws) -> float:
    return float(getattr(draws, "diagnostics", {}).get("min_ess", len(_first(draws))))


def _first(draws):
    return next(iter(parameters(draws).values()))


def compare_parameters(model: str, fit: str, fits: dict) -> list[dict]:
    """One row per parameter: each engine's posterior mean and SD, and the NUTS engines'
    z-scores against the conjugate one."""
    base = parameters(fits["conjugate"])
    s = len(_first(fits["conjugate"]))
    rows = []
    for name, c in base.items():
        row = {"model": MODELS[model], "fit": fit, "parameter": name,
               "conjugate_mean": c.mean(), "conjugate_sd": c.std(ddof=1)}
        for engine in [e for e in ENGINE_NAMES[1:] if e in fits]:
            v = parameters(fits[engine])[name]
            se = np.sqrt(c.var(ddof=1) / s + v.var(ddof=1) / _ess(fits[engine]))
            row.update({f"{engine}_mean": v.mean(), f"{engine}_sd": v.std(ddof=1),
                        f"{engine}_z": (v.mean() - c.mean()) / se,
                        f"{engine}_shift_sd": (v.mean() - c.mean()) / c.std(ddof=1)})
        rows.append(row)
    return rows


def cell_intervals(synth, draws, prepared: PreparedFit, batch, rng, settings=SETTINGS):
    """Average centre and length of the m-set CIs of the 24 cells (counts, then means) over
    ``groups`` groups of m distinct draws of the weighted fit; also the average √T."""
    g, m = settings["groups"], settings["m"]
    index = rng.choice(settings["draws"], size=g * m, replace=False)
    w = batch.weights[0]
    y, _, w_smooth = synth.synthesize_sets(draws.take(index), prepared, w, rng)
    values = batch.values[0]
    cells = np.broadcast_to((values[:, 0] * len(GENDERS) + values[:, 1]).astype(np.int64),
                            (g, m, len(w)))
    strata = np.broadcast_to(batch.strata[0], cells.shape)
    fbp = synth.name == "fbp"
    t = survey_table(cells, w_smooth.reshape(g, m, -1), y.reshape(g, m, -1), DOMAINS, strata,
                     len(FIELDS),
                     count_variance=settings["fbp_count_variance"] if fbp else "stratified",
                     mean_weights=settings["fbp_mean_weights"] if fbp else "weighted")
    out = {}
    for kind, q, u in (("count", t.counts, t.count_variance), ("mean", t.means, t.mean_variance)):
        pooled = combine(q[..., CELLS], u[..., CELLS])
        out[kind] = {"centre": pooled.estimate.mean(axis=0),
                     "length": (pooled.ci_high - pooled.ci_low).mean(axis=0),
                     "se": np.sqrt(pooled.variance).mean(axis=0)}
    return out


def sample_design(batch):
    """(X, log y, w) of the one sample: the additive field + gender design of the study."""
    x = design_matrix(batch.values[0][:, :2], (len(FIELDS), len(GENDERS)), "additive")
    return x, np.log(batch.values[0][:, 2]), batch.weights[0]


def unweighted_fit(model: str, engine: str, batch, settings=SETTINGS):
    """(synthesizer, its model, draws of the unweighted fit, the prepared fit with the record
    risks Δ_i) of one engine on the sample."""
    synth = synthesizer(model, engine, settings)
    mod = synth.model()
    x, log_y, w = sample_design(batch)
    response = mod.response(log_y, w)
    d = mod.fit(x, response, np.ones(len(log_y)), settings["draws"],
                generator(settings["seed"], NAME, model, engine, "unweighted"))
    return synth, mod, d, PreparedFit(x, response, record_risk(mod.loglik(d, x, response)))


def tune_conjugate(model: str, synth, prepared: PreparedFit, settings=SETTINGS):
    """The exact engine's fit tuned to Δ = ``lipschitz_bound`` (its c₁ search)."""
    seed = int(generator(settings["seed"], NAME, model, "conjugate", "tune").integers(2**63))
    return synth.tune(prepared, settings["lipschitz_bound"], seed)


def run_model(model: str, batch, settings=SETTINGS, log=None) -> dict:
    """Every engine's fits for one model (see the module docstring); ``log(message)`` hears of
    each step. The conjugate engine tunes c₁ to Δ; a NUTS engine is fitted unweighted and at one
    α: the conjugate's tuned α (``nuts_conjugate_prior``, the same target) or its own
    α(c₁ of the conjugate) (``nuts``), whose Δ_α tells whether it would tune to the same c₁."""
    log = log or (lambda message: None)
    root = settings["seed"]
    x = sample_design(batch)[0]
    result = {"unweighted": {}, "weighted": {}, "prepared": {}, "alpha": {}, "bound": {},
              "cells": {}, "seconds": {}}
    c1 = None
    for engine in settings["engines"][model]:
        start = time.perf_counter()
        synth, mod, d, prepared = unweighted_fit(model, engine, batch, settings)
        response = prepared.response
        result["unweighted"][engine], result["prepared"][engine] = d, prepared
        log(f"{model} {engine}: unweighted fit, {time.perf_counter() - start:.0f} s")
        if engine == "conjugate":
            tuned = tune_conjugate(model, synth, prepared, settings)
            c1, result["tuned"] = tuned.c1, tuned
            alpha, weighted, bound = tuned.alpha, tuned.draws, tuned.bound
        else:
            alpha = (result["alpha"]["conjugate"] if engine == "nuts_conjugate_prior"
                     else risk_weights(prepared.risk, c1))
            weighted = mod.fit(x, response, alpha, settings["draws"],
                               generator(root, NAME, model, engine, "weighted"))
            bound = float(lipschitz_bounds(mod.loglik(weighted, x, response), alpha).max())
        result["alpha"][engine], result["weighted"][engine] = alpha, weighted
        result["bound"][engine] = bound
        result["cells"][engine] = cell_intervals(
            synth, weighted, prepared, batch, generator(root, NAME, model, engine, "sets"),
            settings)
        result["seconds"][engine] = time.perf_counter() - start
        log(f"{model} {engine}: weighted fit (Δ_α = {bound:.4g}), "
            f"{result['seconds'][engine]:.0f} s")
    return result


def fresh_bounds(model: str, batch, r: dict, settings=SETTINGS) -> np.ndarray:
    """Δ_α of ``fresh_fits`` exact refits at the conjugate's tuned α with new seeds: the Monte
    Carlo spread of a bound that is a maximum over S draws (the tuned fit's own Δ_α is the one
    draw set that the search kept below Δ, so it sits low in that spread)."""
    mod = synthesizer(model, "conjugate", settings).model()
    return refit_bounds(model, mod, r["prepared"]["conjugate"], r["alpha"]["conjugate"],
                        settings["fresh_fits"], settings)


def refit_bounds(model: str, mod, prepared: PreparedFit, alpha, fits: int,
                 settings=SETTINGS) -> np.ndarray:
    """Δ_α = max_i Δ_{α,i} of ``fits`` fits of ``mod`` at the fixed weights α, fit j drawn
    from its own stream (``fresh``, j) of the root seed."""
    x, response = prepared.x, prepared.response
    return np.array([
        lipschitz_bounds(mod.loglik(mod.fit(x, response, alpha, settings["draws"], generator(
            settings["seed"], NAME, model, "conjugate", "fresh", j)), x, response), alpha).max()
        for j in range(fits)])


def summary_rows(model: str, r: dict) -> list[dict]:
    """The agreement table's rows of one model: quantity × engine (blank where an engine was
    not run or the quantity is not its)."""
    label = MODELS[model]
    risk = {e: p.risk for e, p in r["prepared"].items()}
    nuts = [e for e in r["unweighted"] if e != "conjugate"]
    rows = []

    def add(quantity, values: dict):
        rows.append({"model": label, "quantity": quantity,
                     **{e: values.get(e, np.nan) for e in ENGINE_NAMES}})

    add("unweighted_bound", {e: v.max() for e, v in risk.items()})
    add("risk_median", {e: np.median(v) for e, v in risk.items()})
    add("risk_q90", {e: np.quantile(v, 0.9) for e, v in risk.items()})
    add("risk_corr", {e: np.corrcoef(v, risk["conjugate"])[0, 1] for e, v in risk.items()})
    add("risk_rel_diff_max", {e: np.max(np.abs(v / risk["conjugate"] - 1.0))
                              for e, v in risk.items()})
    c1 = r["tuned"].c1
    add("c1", {"conjugate": c1})
    add("refits", {"conjugate": r["tuned"].refits})
    add("lipschitz_bound", r["bound"])  # the conjugate's tuned Δ_α; NUTS's at that c₁ / α
    if "fresh_bounds" in r:
        for key, f in (("mean", np.mean), ("min", np.min), ("max", np.max)):
            add(f"lipschitz_bound_fresh_{key}", {"conjugate": f(r["fresh_bounds"])})
    add("implied_c1", {e: c1 * r["bound"]["conjugate"] / r["bound"][e] for e in r["bound"]})
    add("alpha_mean", {e: a.mean() for e, a in r["alpha"].items()})
    for fit in ("unweighted", "weighted"):
        params = pd.DataFrame(compare_parameters(model, fit, r[fit]))
        add(f"{fit}_max_abs_z", {e: params[f"{e}_z"].abs().max() for e in nuts})
        add(f"{fit}_max_abs_shift_sd", {e: params[f"{e}_shift_sd"].abs().max() for e in nuts})
        add(f"{fit}_sd_ratio_min", {e: (params[f"{e}_sd"] / params["conjugate_sd"]).min()
                                    for e in nuts})
        add(f"{fit}_sd_ratio_max", {e: (params[f"{e}_sd"] / params["conjugate_sd"]).max()
                                    for e in nuts})
    for kind in ("count", "mean"):
        base = r["cells"]["conjugate"][kind]
        ratio = {e: c[kind]["length"] / base["length"] for e, c in r["cells"].items()}
        shift = {e: np.abs(c[kind]["centre"] - base["centre"]) / base["se"]
                 for e, c in r["cells"].items()}
        add(f"{kind}_ci_ratio_min", {e: v.min() for e, v in ratio.items()})
        add(f"{kind}_ci_ratio_median", {e: np.median(v) for e, v in ratio.items()})
        add(f"{kind}_ci_ratio_max", {e: v.max() for e, v in ratio.items()})
        add(f"{kind}_centre_shift_se_max", {e: v.max() for e, v in shift.items()})
    for key in ("divergences", "min_ess", "max_rhat"):
        for fit in ("unweighted", "weighted"):
            add(f"nuts_{key}_{fit}", {e: r[fit][e].diagnostics[key] for e in nuts})
    add("seconds", {e: round(v, 0) for e, v in r["seconds"].items()})
    return rows


def cell_rows(model: str, r: dict) -> list[dict]:
    rows = []
    for kind in ("count", "mean"):
        base = r["cells"]["conjugate"][kind]
        if "nuts" not in r["cells"]:
            continue
        nuts = r["cells"]["nuts"][kind]
        for j, i in enumerate(CELLS):
            rows.append({
                "model": MODELS[model], "kind": kind, "cell": domain_label(DOMAINS.names[i]),
                "conjugate_centre": base["centre"][j], "nuts_centre": nuts["centre"][j],
                "centre_shift_se": (nuts["centre"][j] - base["centre"][j]) / base["se"][j],
                "conjugate_length": base["length"][j], "nuts_length": nuts["length"][j],
                "length_ratio": nuts["length"][j] / base["length"][j]})
    return rows


def validation_sample(settings=SETTINGS):
    pop = make_population(np.random.default_rng(settings["population_seed"]))
    return draw_samples(pop, generator(settings["seed"], NAME, "sample"), 1, settings["n"])


def make_tables(settings=SETTINGS, log=print) -> dict[str, pd.DataFrame]:
    """The three tables: ``nuts_agreement`` (summary), ``nuts_parameters``, ``nuts_cells``."""
    batch = validation_sample(settings)
    summary, params, cells = [], [], []
    for model in MODELS:
        r = run_model(model, batch, settings, log)
        r["fresh_bounds"] = fresh_bounds(model, batch, r, settings)
        summary += summary_rows(model, r)
        for fit in ("unweighted", "weighted"):
            params += compare_parameters(model, fit, r[fit])
        cells += cell_rows(model, r)
    return {"nuts_agreement": pd.DataFrame(summary).round(4),
            "nuts_parameters": pd.DataFrame(params).round(5),
            "nuts_cells": pd.DataFrame(cells).round(4)}


def main() -> None:  # pragma: no cover - a command
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        for name, table in make_tables().items():
            print(f"\n== {name}\n{table.to_string(index=False)}")


if __name__ == "__main__":  # pragma: no cover
    main()
