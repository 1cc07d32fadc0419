"""Bowen & Liu (2020) Simulation 2 (§4.2 and Supplementary Materials; spec 000 §4.2): one
continuous variable.

x_i ~ N(μ, σ²), i = 1..n, brought into public bounds [c₀, c₁] = [μ + aσ, μ + bσ] by clamping
("manual truncation", verified against Supp. Table 2, spec §4.2); asymmetric bounds
[μ − 3σ, μ + 4σ] in the main text, symmetric [μ − 4σ, μ + 4σ] in the supplement. Methods:
MODIPS and non-DP MS under the normal model with prior ∝ σ⁻² (``NormalInverseGamma``), the
perturbed histogram (PERT), the smoothed histogram (SMOOTH) and the original data (Ori).
Estimands μ and σ² (truth: μ and the nominal σ², spec §6 item 9); per set x̄_j with s_j²/n and
s_j² with (s_j²)²(2/(n − 1) + κ_j/n), pooled with Eqs. 9–11 (m = 1: Wald z interval).
All paper constants are in ``conf/study/bowen_liu_sim2.yaml``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from harness.data import RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.inference import COMBINING_RULES, sample_mean_and_variance
from harness.models import NormalInverseGamma
from harness.synthesizers import make_synthesizer
from harness.validation import check_label

from ...common import as_number

DATA_BOUNDING = ("clamp", "truncate")
BIN_SD = ("sample", "public")
MODEL_BASED = ("ms", "modips")
HISTOGRAM = ("perturbed_histogram", "smoothed_histogram")


class Simulation2(Study):
    grid_rules = {"bounds": check_label,  # a name of study.bound_settings (checked in validate)
                  "n": {"integer": True, "minimum": 2},
                  "sigma2": {"open_interval": (0, math.inf)}}
    extra_keys = ("mu", "bound_settings", "data_bounding", "bin_sd")

    def validate(self) -> None:
        grid = self.config["grid"]
        settings = self.config.get("bound_settings") or {}
        if not isinstance(settings, dict) or not settings:
            raise ConfigError("study.bound_settings: give named bounds such as asym: [-3, 4]")
        for name, ab in settings.items():
            key = f"study.bound_settings.{name}"
            if not isinstance(ab, (list, tuple)) or len(ab) != 2:
                raise ConfigError(f"{key}: expected [a, b] (bounds μ + a·σ, μ + b·σ), got {ab!r}")
            a, b = as_number(key, ab[0]), as_number(key, ab[1])
            if not a < b:
                raise ConfigError(f"{key}: need a < b, got [{a:g}, {b:g}]")
        for value in grid["bounds"]:
            if value not in settings:
                raise allowed("study.grid.bounds", value, list(settings))
        as_number("study.mu", self.config.get("mu", 0))
        for key, value, choices in (
            ("study.data_bounding", self.config.get("data_bounding", "clamp"), DATA_BOUNDING),
            ("study.bin_sd", self.config.get("bin_sd", "sample"), BIN_SD),
            ("study.combining_rule", self.config.get("combining_rule", "partial"),
             COMBINING_RULES),
        ):
            if value not in choices:
                raise allowed(key, value, choices)

    # --- scenario helpers -----------------------------------------------------------------------
    def mu(self) -> float:
        return as_number("study.mu", self.config.get("mu", 0))

    def public_bounds(self, scenario) -> tuple[float, float]:
        """[c₀, c₁] = [μ + aσ, μ + bσ] of the scenario's bound setting (public knowledge)."""
        a, b = (as_number("study.bound_settings", v)
                for v in self.config["bound_settings"][scenario["bounds"]])
        sigma = math.sqrt(float(scenario["sigma2"]))
        return self.mu() + a * sigma, self.mu() + b * sigma

    # --- the study proper -----------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        n = int(scenario["n"])
        sigma = math.sqrt(float(scenario["sigma2"]))
        lo, hi = self.public_bounds(scenario)
        if self.config.get("data_bounding", "clamp") == "clamp":
            x = np.clip(self.mu() + sigma * rng.standard_normal((n_replicates, n)), lo, hi)
        else:  # N(μ, σ²) truncated to [c₀, c₁] by the inverse CDF (equal to rejection sampling)
            plo = special.ndtr((lo - self.mu()) / sigma)
            phi = special.ndtr((hi - self.mu()) / sigma)
            u = plo + (phi - plo) * rng.random((n_replicates, n))
            x = np.clip(self.mu() + sigma * special.ndtri(u), lo, hi)
        return RecordBatch(x[..., None], columns=("x",))

    def estimands(self, scenario):
        return {"mu": self.mu(), "sigma2": float(scenario["sigma2"])}

    def analyse(self, sets: RecordBatch, scenario):
        x = sets.values[..., 0]  # (R, m, n)
        mean, v_mean, var, v_var = sample_mean_and_variance(x)
        return np.stack([mean, var], axis=-1), np.stack([v_mean, v_var], axis=-1)

    def tabular_schema(self, scenario):
        """x with the scenario's public bounds, for the benchmark's data interface."""
        from harness.schema import Numeric, Schema

        return Schema((Numeric("x", *self.public_bounds(scenario)),))

    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        lo, hi = self.public_bounds(scenario)
        if name in MODEL_BASED:
            params["model"] = NormalInverseGamma(lo, hi)
        elif name in HISTOGRAM:
            for key in ("lower", "upper", "public_sd"):
                if key in params:
                    raise ConfigError(
                        f"study.roster.{label}.{key}: set by the scenario (study.bound_settings, "
                        "study.bin_sd), not in the roster"
                    )
            params.update(lower=lo, upper=hi)
            if self.config.get("bin_sd", "sample") == "public":
                params["public_sd"] = math.sqrt(float(scenario["sigma2"]))
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = Simulation2
