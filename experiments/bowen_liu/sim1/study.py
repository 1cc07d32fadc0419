"""Bowen & Liu (2020) Simulation 1 (§4.1; spec 000 §4.1): one binary variable.

x_i iid Bern(π), i = 1..n. Methods: MODIPS and non-DP MS under the Beta(1/3, 1/3)-binomial
model, the Laplace sanitizer (LAP), Multinomial-Dirichlet (MD), Binomial-Beta McClure-Reiter
(BB-MR) and the original data (Ori). Estimand π; per set p̂_j with v_j = p̂_j(1 − p̂_j)/n, pooled
with Eqs. 9–11. All paper constants are in ``conf/study/bowen_liu_sim1.yaml``.

The data are generated as their sufficient table (n₀, n₁) with n₁ ~ Binomial(n, π), which is
equal in distribution to tabulating n Bernoulli records (tested against the record-level loop
in ``sim1.loop``).
"""

from __future__ import annotations

import numpy as np

from harness.data import CountBatch
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.inference import COMBINING_RULES, cell_proportions
from harness.models import BetaBinomial
from harness.synthesizers import make_synthesizer

from ...common import as_number

POSTPROCESS = ("clamp", "redraw", "reviewer")
MODEL_BASED = ("ms", "modips")


class Simulation1(Study):
    grid_rules = {"n": {"integer": True, "minimum": 2},  # s.e. of p̂ needs n ≥ 2
                  "pi": {"open_interval": (0, 1)}}
    extra_keys = ("prior", "postprocess")

    def validate(self) -> None:
        pp = self.config.get("postprocess", "clamp")
        if pp not in POSTPROCESS:
            raise allowed("study.postprocess", pp, POSTPROCESS)
        rule = self.config.get("combining_rule", "partial")
        if rule not in COMBINING_RULES:
            raise allowed("study.combining_rule", rule, COMBINING_RULES)
        a, b = self.prior()
        if not (a > 0 and b > 0):
            raise ConfigError(f"study.prior: a and b must be > 0, got a={a}, b={b}")

    def prior(self) -> tuple[float, float]:
        prior = self.config.get("prior", {})
        return as_number("study.prior.a", prior["a"]), as_number("study.prior.b", prior["b"])

    def generate(self, scenario, rng, n_replicates):
        n = int(scenario["n"])
        n1 = rng.binomial(n, float(scenario["pi"]), size=n_replicates)
        return CountBatch(np.stack([n - n1, n1], axis=-1), n)

    def estimands(self, scenario):
        return {"pi": float(scenario["pi"])}

    def analyse(self, sets: CountBatch, scenario):
        p, v = cell_proportions(sets.counts[..., 1:], sets.n)
        return p, v

    def model(self) -> BetaBinomial:
        a, b = self.prior()
        pp = self.config.get("postprocess", "clamp")
        return BetaBinomial(a, b, bounds="reviewer" if pp == "reviewer" else "natural")

    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        pp = self.config.get("postprocess", "clamp")
        if name in MODEL_BASED:
            params["model"] = self.model()
        if name in ("modips", "laplace_sanitizer"):
            params.setdefault("postprocess", "redraw" if pp == "redraw" else "clamp")
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = Simulation1
