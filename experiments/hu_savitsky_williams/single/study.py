"""Hu, Savitsky & Williams, the single-sample simulation runs (§4.2–§4.4, Figures 3–9; spec 002
§7.4 E2, §8, §9.2): one informative sample (n = 1000) from the simulation population, released
by FBS and FBP at Δ ∈ {1.8, 3.4} with m ∈ {1, 3, 5} (ε = 2·Δ·m; one fit per Δ serves every m,
"requires no additional model fits"), by the Laplace tables at the synthesizers' m = 3 ε
(2·Δ·3: 10.8 as in Fig. 5) and by the confidential sample itself (``ori``).

The data, methods and the interval evaluation ``survey_tables`` are those of the repeated-sampling
study (:class:`RepeatedSampling`, the 27 domains as counts and mean salaries). This study adds
the paper's one-sample utility metric, evaluation ``one_sample`` (metric rows, one per sample):

* ``rmse_ratio_<estimand>``: §4.3's RMSE ratio of one cell, RMSE_method / RMSE_sample with
  RMSE = √((θ̂ − θ_pop)² + SE²), θ̂ and SE the pooled estimate and √T of the method's first m sets
  (the sample: its weighted estimate and linearised SE), θ_pop the population value;
* ``ratio_median_<kind>``, ``ratio_iqr_<kind>``, ``ratio_below_one_<kind>``: the median,
  interquartile range and share below 1 of the 27 ratios of a table (kind ``count`` or
  ``mean``), i.e. the location, spread and "smaller-than-1" share of one violin of Figs 5–7;
* ``weight_resid_sd``: the spread of the weights about the salary in a released set (the
  confidential weights for ``ori``, the smoothed ones for FBS and FBP): the residual SD of the
  least-squares line of log weight on log salary, i.e. the width of Fig. 4's salary–weight
  cloud; ``weight_cv`` and ``weight_sd_log``: the weights' coefficient of variation and the SD
  of their logarithms (marginal spreads); each averaged over the sets;
* ``lipschitz_realised``, ``lipschitz_unweighted``, ``alpha_mean``: the synthesizers' own
  diagnostics (Fig. 3), copied as metrics so claims can read them.

The paper shows one sample. Its statements are judged here on R independent samples, each
analysed exactly as the paper's one: a metric's aggregated value is the mean over samples of the
one-sample statistic, with its Monte Carlo SE over samples (R = 1 gives the paper's figure for
that one sample).
"""

from __future__ import annotations

import numpy as np

from harness.evaluation import MetricEvaluation
from harness.inference import combine

from ..mc.study import ESTIMANDS, RepeatedSampling

KINDS = ("count", "mean")
DIAGNOSTICS = ("lipschitz_realised", "lipschitz_unweighted", "alpha_mean")
SUMMARIES = ("ratio_median", "ratio_iqr", "ratio_below_one")


def one_sample_rmse(estimate, variance, truth) -> np.ndarray:
    """§4.3: RMSE of one release of one cell, √((θ̂ − θ_pop)² + SE²), elementwise."""
    return np.sqrt((np.asarray(estimate) - truth) ** 2 + np.asarray(variance))


def residual_sd(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Residual SD (divisor n − 2) of the least-squares line of y on x along the last axis."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    slope = (xc * yc).sum(axis=-1, keepdims=True) / (xc * xc).sum(axis=-1, keepdims=True)
    return np.sqrt(((yc - slope * xc) ** 2).sum(axis=-1) / (x.shape[-1] - 2))


class SingleSample(RepeatedSampling):
    """The repeated-sampling study's data, methods and tables, plus the one-sample metrics."""

    def _truth_vector(self, scenario) -> np.ndarray:
        truths = self.truths(scenario)
        return np.array([truths[k] for k in ESTIMANDS])

    def _sample_rmse(self, original, scenario) -> np.ndarray:
        """RMSE of the confidential sample's weighted estimates, (R, E)."""
        est, var = self.analyse("sample", _AsRelease(original.train.with_set_axis()))
        return one_sample_rmse(est[:, 0], var[:, 0], self._truth_vector(scenario))

    def _one_sample_metrics(self, mode: str):
        def metrics(original, release, scenario):
            out = {}
            sets = release.sets
            if getattr(sets, "weights", None) is not None:  # (R, m): one value per set
                w = sets.weights
                out["weight_cv"] = w.std(axis=-1) / w.mean(axis=-1)
                out["weight_sd_log"] = np.log(w).std(axis=-1)
                salary = sets.values[..., list(sets.columns).index("salary")]
                out["weight_resid_sd"] = residual_sd(np.log(w), np.log(salary))
            for key in DIAGNOSTICS:
                if key in release.diagnostics:
                    out[key] = np.asarray(release.diagnostics[key], dtype=float)
            if mode == "sample":
                return out
            est, var = self.analyse(mode, release)
            pooled = combine(est, var, rule=self.config.get("combining_rule") or "partial")
            ratio = (one_sample_rmse(pooled.estimate, pooled.variance,
                                     self._truth_vector(scenario))
                     / self._sample_rmse(original, scenario))
            for j, name in enumerate(ESTIMANDS):
                out[f"rmse_ratio_{name}"] = ratio[:, j]
            for kind in KINDS:
                cols = [j for j, name in enumerate(ESTIMANDS) if name.startswith(kind + "_")]
                r = ratio[:, cols]
                q1, med, q3 = np.quantile(r, [0.25, 0.5, 0.75], axis=1)
                out[f"ratio_median_{kind}"] = med
                out[f"ratio_iqr_{kind}"] = q3 - q1
                out[f"ratio_below_one_{kind}"] = (r < 1.0).mean(axis=1)
            return out

        return metrics

    def evaluations_for(self, label):
        from ..mc.study import ANALYSES

        name, _ = self.roster_entry(label)
        mode = ANALYSES[name]
        return [*super().evaluations_for(label),
                MetricEvaluation("one_sample", self._one_sample_metrics(mode),
                                 kinds=("records", "statistics"))]


class _AsRelease:
    """The confidential sample in the shape ``RepeatedSampling.analyse`` reads (``.sets``)."""

    def __init__(self, sets):
        self.sets = sets


STUDY_CLASS = SingleSample
