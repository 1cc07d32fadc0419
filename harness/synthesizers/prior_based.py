"""Synthesizers whose privacy comes from a data-independent prior rather than added noise
(Bowen & Liu 2020 §3.2.1, §4.1).

* Multinomial-Dirichlet (MD; Machanavajjhala et al. 2008, Abowd & Vilhuber 2008): per set,
  π* ~ Dirichlet(α* + n) with every α*_k = n/(e^{ε/m} − 1), then ñ ~ Multinomial(n, π*).
* Binomial-Beta McClure-Reiter (BB-MR; McClure & Reiter 2012): p* = (n₁ + α*)/(n + 2α*) with
  α* = (e^{ε/n} − 1)⁻¹ — no posterior draw — and one set of n Bernoulli(p*) records (m = 1,
  full ε). The paper's method is binary; for K cells p*_k = (n_k + α*)/(n + Kα*).
"""

from __future__ import annotations

from ..models import dirichlet_draw, multinomial_counts
from ..privacy import dirichlet_prior_pseudocount, mcclure_reiter_pseudocount
from .base import SetwiseSynthesizer
from .registry import register


@register
class MultinomialDirichlet(SetwiseSynthesizer):
    name = "multinomial_dirichlet"

    def __init__(self, m: int = 5):
        super().__init__(m)

    def _one_set(self, data, eps_set, ledger, rng, j):
        alpha = dirichlet_prior_pseudocount(
            data.n, epsilon=eps_set, ledger=ledger, statistic=f"set {j + 1}: cell counts"
        )
        theta = dirichlet_draw(data.counts + alpha, rng)
        return multinomial_counts(data.n, theta, rng), {}


@register
class BinomialBetaMcClureReiter(SetwiseSynthesizer):
    name = "bb_mcclure_reiter"

    def __init__(self, m: int = 1):
        super().__init__(m)

    def _one_set(self, data, eps_set, ledger, rng, j):
        alpha = mcclure_reiter_pseudocount(
            data.n, epsilon=eps_set, ledger=ledger, statistic=f"set {j + 1}: cell counts"
        )
        p = (data.counts + alpha) / (data.n + data.n_cells * alpha)
        return multinomial_counts(data.n, p, rng), {}
