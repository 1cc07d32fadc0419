"""Bi & Shen, simulation S5 (main text Table 2; spec 004 §3 S5, §7.2): linear regression.

Per replicate: N records of p covariates in thirds, N(0, 10²), Poisson(5) and Bernoulli(0.5)
(independent), and Y = Xβ + e with intercept 0, β = (1, …, 1) and e ~ N(0, 1). The p + 1 columns
(Y last) are what every method releases. The data user fits OLS of Y on X with an intercept and
the metric is the L2 error of (intercept, β) against the truth (0, 1, …, 1) (spec §6 A19).

Methods (spec §2, §7.2; every constant in ``conf/study/bi_shen_s5.yaml``):

* NP: the original data, all N records (roster ``ori``).
* DIP: the hold-out share h of the grid is split off (m = round(h·N)), the other n = N − m
  records are privatized by the cube DIP with one random variable order per replicate, Poisson
  and Bernoulli columns continualized on their public lattices; every column at ε/(p + 1).
* LRM: each X column with Laplace(Δ_j (p + 1)/ε) (normal: 2·max|X_j|, Poisson: max X_j,
  Bernoulli: 1), then the residual route for Y (spec §2, A11).
* OPM: the ℓ2-ball mechanism on each column as one vector (d = n, radius √n·max|Z|, A12) and
  the same residual route.

The hold-out share is a grid axis; only DIP reads it. NP, LRM and OPM do not depend on it (the
engine runs every method in every scenario), so each hold-out cell holds an independent
replicate of their errors; the tables and claims average those three (spec §7.2 lists them once)."""

from __future__ import annotations

import numpy as np

from harness.data import RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError
from harness.evaluation import MetricEvaluation
from harness.inference.regression import ols
from harness.metrics.accuracy import l2_error
from harness.synthesizers import make_synthesizer

#: the covariate families of the thirds, in column order
FAMILIES = ("normal", "poisson", "bernoulli")


def _share(key, value):
    if not (isinstance(value, float) and 0 < value < 1):
        raise ConfigError(f"{key}: must be a share in (0, 1), got {value!r}")


def _p_rule(key, value):
    if not (isinstance(value, int) and not isinstance(value, bool) and value >= 3
            and value % 3 == 0):
        raise ConfigError(f"{key}: p must be a multiple of 3 (thirds of normal, Poisson and "
                          f"Bernoulli covariates), got {value!r}")


def families(p: int) -> list[str]:
    """The family of each of the p covariates (thirds, spec S5)."""
    return [f for f in FAMILIES for _ in range(p // 3)]


class LinearRegression(Study):
    grid_rules = {"N": {"integer": True, "minimum": 20}, "p": _p_rule, "holdout": _share}
    extra_keys = ("covariates", "noise_sd", "dip_columns")

    def validate(self) -> None:
        cov = self.config.get("covariates") or {}
        for key in ("normal_sd", "poisson_mean", "bernoulli_p"):
            if not isinstance(cov.get(key), (int, float)) or cov[key] <= 0:
                raise ConfigError(f"study.covariates.{key}: must be a number > 0, got "
                                  f"{cov.get(key)!r}")
        if not 0 < cov["bernoulli_p"] < 1:
            raise ConfigError("study.covariates.bernoulli_p: must be in (0, 1)")
        sd = self.config.get("noise_sd")
        if not isinstance(sd, (int, float)) or sd <= 0:
            raise ConfigError(f"study.noise_sd: must be a number > 0, got {sd!r}")

    # --- data ----------------------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        n, p = int(scenario["N"]), int(scenario["p"])
        cov, k = self.config["covariates"], p // 3
        # the records laid out once, (R, N, p + 1), each third written in place
        values = np.empty((n_replicates, n, p + 1))
        values[..., :k] = rng.normal(0, cov["normal_sd"], (n_replicates, n, k))
        values[..., k:2 * k] = rng.poisson(cov["poisson_mean"], (n_replicates, n, k))
        values[..., 2 * k:p] = rng.binomial(1, cov["bernoulli_p"], (n_replicates, n, k))
        values[..., p] = values[..., :p] @ self.truth(p)[1:] + rng.normal(
            0, self.config["noise_sd"], (n_replicates, n))
        columns = tuple(f"x{j + 1}" for j in range(p)) + ("y",)
        return RecordBatch(values, columns=columns)

    @staticmethod
    def truth(p: int) -> np.ndarray:
        """(intercept, β) = (0, 1, …, 1)."""
        return np.r_[0.0, np.ones(p)]

    # --- evaluation ----------------------------------------------------------------------------
    def l2(self, original, release, scenario):
        p = int(scenario["p"])
        v = release.sets.values  # (R, m, n, p + 1)
        return {"l2_error": l2_error(ols(v[..., :p], v[..., p]), self.truth(p))}

    def evaluations(self):
        return [MetricEvaluation("regression", self.l2, names=("l2_error",))]

    # --- the benchmark's data interface (issue 24 item 2) ---------------------------------------
    def tabular_interface(self, spec, scenario, key):
        """The public discretisation of the p + 1 columns, whose names depend on p: bounds from
        the design's own moments, E ± ``public_sds`` SD (config ``benchmark.interface``,
        [ours]), in the ``bins`` of ``*`` each: normal covariates in ±k·normal_sd, Poisson
        covariates on the integers 0..⌈μ + k√μ⌉ in bins of w whole integers (the bins end at
        half-integers, the last widened to K·w; larger counts fall in the top bin), Bernoulli
        covariates on {0, 1} (exact), y in E y ± k·SD(y) with E y = (p/3)(μ + π),
        Var y = (p/3)(σ² + μ + π(1 − π)) + noise_sd²."""
        from harness.benchmark.interface import ANY, TabularInterface
        from harness.schema import Numeric, Schema

        spec = dict(spec)
        k = float(spec.pop("public_sds", 4))
        bins = int((spec.get("bins") or {}).get(ANY, 1))
        p, cov = int(scenario["p"]), self.config["covariates"]
        sd, mu, pi = cov["normal_sd"], cov["poisson_mean"], cov["bernoulli_p"]
        width = int(np.ceil((np.ceil(mu + k * np.sqrt(mu)) + 1) / bins))
        support = {"normal": (-k * sd, k * sd), "poisson": (0.0, bins * width - 1.0),
                   "bernoulli": (0.0, 1.0)}
        mean_y = p / 3 * (mu + pi)
        sd_y = np.sqrt(p / 3 * (sd ** 2 + mu + pi * (1 - pi)) + self.config["noise_sd"] ** 2)
        names = [f"x{j + 1}" for j in range(p)]
        columns = [Numeric(c, *support[f], integer=f == "poisson")
                   for c, f in zip(names, families(p), strict=True)]
        columns.append(Numeric("y", mean_y - k * sd_y, mean_y + k * sd_y))
        levels = dict(spec.pop("levels", None) or {})
        bounds = dict(spec.pop("bounds", None) or {})
        for c, f in zip(names, families(p), strict=True):
            if f == "bernoulli":
                levels[c] = [0.0, 1.0]
            elif f == "poisson":
                bounds[c] = [-0.5, bins * width - 0.5]
        return TabularInterface.from_config({**spec, "levels": levels, "bounds": bounds}, key,
                                            Schema(tuple(columns)), scenario)

    # --- methods -------------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        p = int(scenario["p"])
        fam = families(p)
        if name == "dip":
            kinds = self.config["dip_columns"]
            params["columns"] = [kinds[f] for f in fam] + [kinds["response"]]
            params["holdout_share"] = float(scenario["holdout"])
        elif name in ("lrm", "opm"):
            rules = params.pop("column_rules", None)
            if rules is not None:
                key = "sensitivity" if name == "lrm" else "bound"
                params[key] = [rules[f] for f in fam] + [rules["response"]]
            params["response"] = p
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = LinearRegression
