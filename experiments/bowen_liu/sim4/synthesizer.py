"""MODIPS-Correct of Bowen & Liu (2020) §4.3.2: MODIPS with the SLOMAG model and CM2009 noise
on the logistic coefficients (spec 000 §2.8, §4.4, §6 items 20–21).

Per released set j (budget ε/m split ``n_parts`` = 8 ways, the paper's ε/40 each):
1. z̄1, z̄2, S11, S22, S12 with the Laplace mechanism (sensitivities 8/n, 64/n; BIT to public
   bounds), Σ* ~ IW(n, n·S*), μ* ~ N(z̄*, Σ*/n), z̃ ~ N(μ*, Σ*) clamped to the box;
2. β1, β2 and (β3, β4) jointly: draw j from the posterior under N(0, 1/λ) priors on normalised
   predictors, plus Chaudhuri–Monteleoni (2009) noise with density ∝ exp(−nλ(ε/40)‖e‖/2);
3. w̃1, w̃2, w̃3 simulated sequentially from the noisy β's and the normalised synthetic
   predictors.

The posterior draws do not depend on ε: ``prepare`` draws the m per replicate once per task
(``uses_prepare``) and every release over the ε grid reuses them.

Privacy: the Laplace parts are ε-DP for the stated sensitivities; the CM2009 noise is added to
a posterior draw, which is Bowen & Liu's heuristic, not a proven DP guarantee (ledger note).

Registered as ``slomag_modips`` when this module is imported, which the study module
(``experiments.bowen_liu.sim4.study``) does, so that every process that loads the study, a worker
included, knows it.
"""

from __future__ import annotations

import numpy as np

from harness.data import RecordBatch
from harness.privacy import at_bound, bounded_laplace_mechanism, chaudhuri_monteleoni_noise
from harness.synthesizers.base import AT_BOUND, Synthesizer
from harness.synthesizers.registry import register
from harness.validation import check_number

from .model import N_CELLS, REGRESSIONS, SlomagModel


@register
class SlomagModips(Synthesizer):
    """MODIPS-Correct (see module docstring). ``model`` a :class:`SlomagModel` with
    ``prior_precision`` λ > 0."""

    name = "slomag_modips"
    #: numeric z with the 12 w-cells: ``synthesize`` takes a ready RecordBatch with cells
    input_kind = "mixed"
    uses_prepare = True

    def __init__(self, model: SlomagModel, m: int = 5, n_parts: int = 8,
                 postprocess: str = "clamp"):
        super().__init__(m)
        if not model.prior_precision > 0:
            raise ValueError("MODIPS-Correct needs a prior precision λ > 0 (CM2009 noise)")
        self.model = model
        self.n_parts = int(check_number("n_parts", n_parts, integer=True, minimum=8))
        self.postprocess = postprocess

    def prepare(self, data, rng) -> dict:
        """m posterior draws of the β's per replicate (ε-free)."""
        return self.model.beta_draws(data, self.m, rng)

    def _release(self, data, epsilon, ledger, rng, prepared=None):
        model = self.model
        eps_part = epsilon / self.m / self.n_parts
        n = data.n
        sets, hits = [], []
        stats = model.sufficient_statistics(data, share=1.0 / self.n_parts)
        for j in range(self.m):
            sanitized, hit = {}, np.zeros(data.batch_shape, dtype=bool)
            for s in stats:
                sanitized[s.name] = bounded_laplace_mechanism(
                    s.value, sensitivity=s.sensitivity, epsilon=eps_part, lower=s.lower,
                    upper=s.upper, rule=self.postprocess, rng=rng, ledger=ledger,
                    statistic=f"set {j + 1}: {s.name}")
                hit |= at_bound(sanitized[s.name], s.lower, s.upper)
            mu, sigma = model.draw_normal(sanitized, n, rng)
            z = model.draw_z(mu, sigma, n, rng)
            betas = {}
            for name, _, _ in REGRESSIONS:
                draw = prepared[name][:, j]  # (R, p) or (R, 2, 5)
                flat = draw.reshape(draw.shape[0], -1)
                noisy = chaudhuri_monteleoni_noise(
                    flat, n=n, regularization=model.prior_precision, epsilon=eps_part, rng=rng,
                    ledger=ledger, statistic=f"set {j + 1}: {name}",
                    applied_to="posterior_draw")
                betas[name] = noisy.reshape(draw.shape)
            cells = model.draw_w(z, betas, rng)
            sets.append((z, cells))
            hits.append(hit)
        out = RecordBatch(np.stack([s[0] for s in sets], axis=1),
                          np.stack([s[1] for s in sets], axis=1), N_CELLS, data.columns)
        return out, {AT_BOUND: np.stack(hits, axis=1)}
