"""Bi & Shen, the known-F simulations (spec 004 §3 S1, S2; §7.2): one variable, n draws from a
known distribution F, DIP with the true F as its reference (eq. (1); discrete F by the
randomized PIT, equivalent to continualization (3)–(4)), so there is no hold-out.

* ``bi_shen_s1`` (:class:`DiscreteMeans`): Bernoulli(0.1), Binomial(5, 0.5), Poisson(3) and
  Geometric(0.2) (failures, support {0, 1, …}, mean 4; A20). Metric: |mean(Z̃) − E_F Z| (A21).
* ``bi_shen_s2`` (:class:`KSDistortion`): Unif(0, 1), Beta(2, 5), N(0, 1), Exp(1). Metric: the
  one-sample KS distance of the released sample to F, ×10³.

Every method releases the n records; the metric reads the release and the known F (the truth
of the original data's generating process). The distributions' parameters are in the study
configs (``distributions``), the methods in their rosters; a roster entry may give a per-
distribution LRM sensitivity (``sensitivity_by_dist``, spec §2 table)."""

from __future__ import annotations

import functools

import numpy as np
from scipy import stats

from harness.data import RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.evaluation import MetricEvaluation
from harness.metrics.accuracy import abs_mean_error, ks_distance
from harness.synthesizers import make_synthesizer

from ..exm import make_exm

#: scipy families a config may name, with the parameter names they take
FAMILIES = {
    "bernoulli": ("p",), "binomial": ("n", "p"), "poisson": ("mu",),
    "geometric_failures": ("p",),  # R's convention: failures before the first success (A20)
    "uniform": ("low", "high"), "beta": ("a", "b"), "normal": ("mean", "sd"),
    "exponential": ("rate",),
}


def frozen(family: str, params: dict):
    """The frozen scipy distribution of a config entry."""
    if family == "bernoulli":
        return stats.bernoulli(params["p"])
    if family == "binomial":
        return stats.binom(int(params["n"]), params["p"])
    if family == "poisson":
        return stats.poisson(params["mu"])
    if family == "geometric_failures":
        return stats.geom(params["p"], loc=-1)
    if family == "uniform":
        return stats.uniform(params["low"], params["high"] - params["low"])
    if family == "beta":
        return stats.beta(params["a"], params["b"])
    if family == "normal":
        return stats.norm(params["mean"], params["sd"])
    return stats.expon(scale=1.0 / params["rate"])


def _dist_name(key, value):
    if not (isinstance(value, str) and value):
        raise ConfigError(f"{key}: give the name of an entry of study.distributions, got "
                          f"{value!r}")


class KnownF(Study):
    grid_rules = {"n": {"integer": True, "minimum": 2}, "dist": _dist_name}
    extra_keys = ("distributions",)

    def validate(self) -> None:
        names = list(self.config.get("distributions") or {})
        for d in self.config["grid"]["dist"]:
            if d not in names:
                raise allowed("study.grid.dist", d, names)
        for name, spec in (self.config.get("distributions") or {}).items():
            key = f"study.distributions.{name}"
            if not isinstance(spec, dict) or spec.get("family") not in FAMILIES:
                raise allowed(f"{key}.family", (spec or {}).get("family"), list(FAMILIES))
            need = FAMILIES[spec["family"]]
            missing = [k for k in need if not isinstance(spec.get(k), (int, float))]
            if missing:
                raise ConfigError(f"{key}: needs the number {missing[0]!r} "
                                  f"({', '.join(need)})")

    @functools.cache  # noqa: B019 (one study object per config)
    def distribution(self, name: str):
        spec = dict(self.config["distributions"][name])
        return frozen(spec.pop("family"), spec)

    def generate(self, scenario, rng, n_replicates):
        dist = self.distribution(scenario["dist"])
        z = dist.rvs(size=(n_replicates, int(scenario["n"]), 1), random_state=rng)
        return RecordBatch(np.asarray(z, dtype=float), columns=("z",))

    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        by_dist = params.pop("sensitivity_by_dist", None)
        if by_dist is not None:
            params["sensitivity"] = by_dist[scenario["dist"]]
        if name == "dip":
            params["reference"] = "known"
            params["distribution"] = self.distribution(scenario["dist"])
        if name == "exm":  # on the ε axis, per draw (the paper's) or in total (spec §2)
            return make_exm(f"study.roster.{label}", params)
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


class DiscreteMeans(KnownF):
    """S1: |mean(Z̃) − E_F Z| per replicate."""

    def error(self, original, release, scenario):
        mean = float(self.distribution(scenario["dist"]).mean())
        return {"abs_mean_error": abs_mean_error(release.sets.values[..., 0], mean)}

    def evaluations(self):
        return [MetricEvaluation("mean", self.error, names=("abs_mean_error",))]


class KSDistortion(KnownF):
    """S2: 10³ · sup_x |F̂_{Z̃}(x) − F(x)| per replicate."""

    def ks(self, original, release, scenario):
        cdf = self.distribution(scenario["dist"]).cdf
        return {"ks_x1000": ks_distance(release.sets.values[..., 0], cdf, 1000.0)}

    def evaluations(self):
        return [MetricEvaluation("ks", self.ks, names=("ks_x1000",))]
