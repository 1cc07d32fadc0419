"""MODIPS: model-based differentially private synthesis (Liu 2016b; Bowen & Liu 2020 §3.2.2,
Fig. 1).

Per released set j = 1..m, with per-set budget ε/m:
  (2) sanitize each Bayesian sufficient statistic s_k with the Laplace mechanism at budget
      w_k·ε/m (Σ_k w_k = 1; the statistics overlap in individuals, so they compose
      sequentially), bringing s_k* inside its public bounds by the chosen post-processing;
  (3) draw θ* ~ f(θ | s*);
  (4) draw x̃ ~ f(x | θ*).
The model object supplies the statistics, sensitivities, bounds, posterior and predictive.
Statistics are sanitized in the model's order; a sensitivity may be an array (one value per
element, e.g. per cell) or a callable of the statistics sanitized before it.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError
from ..privacy import POSTPROCESS_RULES, at_bound, bounded_laplace_mechanism
from .base import AT_BOUND, SetwiseSynthesizer
from .registry import register


@register
class Modips(SetwiseSynthesizer):
    name = "modips"

    def __init__(self, model, m: int = 5, postprocess: str = "clamp", budget_weights=None):
        super().__init__(m)
        if postprocess not in POSTPROCESS_RULES:
            raise ConfigError(
                f"postprocess: {postprocess!r} is not allowed (allowed: "
                f"{', '.join(POSTPROCESS_RULES)})"
            )
        if budget_weights is not None:
            names = tuple(getattr(model, "statistic_names", budget_weights))
            if set(budget_weights) != set(names):
                raise ConfigError(
                    f"budget_weights: keys {sorted(budget_weights)} must be the model's "
                    f"statistics (allowed: {', '.join(names)})"
                )
            total = sum(budget_weights.values())
            if not math.isclose(total, 1.0, rel_tol=1e-9):
                raise ConfigError(f"budget_weights: must sum to 1, got {total:g}")
        self.model = model
        self.postprocess = postprocess
        self.budget_weights = None if budget_weights is None else dict(budget_weights)

    def _share(self, stat) -> float:
        if self.budget_weights is None:
            return stat.budget_share
        if stat.name not in self.budget_weights:
            raise ConfigError(
                f"budget_weights: missing statistic {stat.name!r} "
                f"(allowed: {', '.join(self.budget_weights)})"
            )
        return self.budget_weights[stat.name]

    def _one_set(self, data, eps_set, ledger, rng, j):
        sanitized = {}
        stats = self.model.sufficient_statistics(data)
        for stat in stats:
            # a callable sensitivity depends on the statistics sanitized before it (e.g. GLOM
            # cell means calibrated on sanitized cell counts, spec 000 §6 item 12)
            sens = stat.sensitivity
            sens = sens(sanitized) if callable(sens) else sens
            sanitized[stat.name] = bounded_laplace_mechanism(
                stat.value,
                sensitivity=sens,
                epsilon=eps_set * self._share(stat),
                lower=stat.lower,
                upper=stat.upper,
                rule=self.postprocess,
                rng=rng,
                ledger=ledger,
                statistic=f"set {j + 1}: {stat.name}",
            )
        theta = self.model.posterior_draw(sanitized, data, rng)
        r = data.n_replicates
        hit = np.zeros(r, dtype=bool)
        for stat in stats:
            mask = at_bound(sanitized[stat.name], stat.lower, stat.upper)
            hit |= mask.reshape(r, -1).any(axis=1)
        return self.model.predictive_draw(theta, data, rng), {AT_BOUND: hit}
