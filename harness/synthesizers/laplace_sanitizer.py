"""The Laplace sanitizer (NP-DIPS for categorical data; Bowen & Liu 2020 §3.1.1, §4.1).

Per released set: the K cell counts are sanitized with the Laplace mechanism at budget ε/m
(one vector query: disjoint cells, l1 sensitivity Δ), brought into [0, n] by boundary-inflated
truncation (``clamp``, the paper's reported variant) or truncation by redraw, and the synthetic
set is generated directly from the sanitized counts without a model: exactly n records
apportioned by largest remainder of n·n_k*/Σ n_k* (or, optionally, a multinomial draw).

Sensitivity. Bowen & Liu use Δ = 1 for every table (add/remove neighbours) while also treating
n as public. With n public, neighbours differ by one *changed* record, which moves one unit
between two cells: Δ = 1 is then exact only when a single count is released (Bowen & Liu
§4.1: ``public_total=True`` with K = 2); a full K-cell table needs Δ = 2, and so do K − 1 cells with
K > 2. ``sensitivity`` is therefore a configured value (the paper's 1 in its study configs), and
the empirical audit shows the difference (tests/harness/privacy/test_privacy_release_audit.py).

With ``public_total=True`` only cells 2..K are sanitized and cell 1 is n minus their sum, the
form of Bowen & Liu §4.1: n₁* = n₁ + e is clamped to [0, n] and the set holds round(n₁*) ones
and n − round(n₁*) zeros. (For K = 2 largest-remainder rounding of (n − n₁*, n₁*) is round(n₁*).)
"""

from __future__ import annotations

import numpy as np

from ..errors import allowed
from ..models import multinomial_counts
from ..privacy import (
    POSTPROCESS_RULES,
    Sensitivity,
    at_bound,
    bounded_laplace_mechanism,
    largest_remainder_round,
)
from ..privacy.ledger import ADD_REMOVE
from ..validation import check_number
from .base import AT_BOUND, SetwiseSynthesizer
from .registry import register

ALLOCATIONS = ("largest_remainder", "multinomial")


@register
class LaplaceSanitizer(SetwiseSynthesizer):
    name = "laplace_sanitizer"

    def __init__(
        self,
        m: int = 5,
        sensitivity: float = 1.0,
        public_total: bool = True,
        allocation: str = "largest_remainder",
        postprocess: str = "clamp",
    ):
        super().__init__(m)
        if allocation not in ALLOCATIONS:
            raise allowed("allocation", allocation, ALLOCATIONS)
        if postprocess not in POSTPROCESS_RULES:
            raise allowed("postprocess", postprocess, POSTPROCESS_RULES)
        self.postprocess = postprocess
        self.sensitivity = float(check_number("sensitivity", sensitivity, minimum=0))
        if self.sensitivity == 0:
            raise allowed("sensitivity", sensitivity, ["a number > 0"])
        self.public_total = bool(public_total)
        self.allocation = allocation

    def sensitivities(self) -> list[Sensitivity]:
        """The cell counts' Δ, declared under add/remove (2Δ under substitution)."""
        return [Sensitivity.declared(self.sensitivity, ADD_REMOVE)]

    def _one_set(self, data, eps_set, ledger, rng, j):
        counts = data.counts.astype(float)
        first = 1 if self.public_total else 0
        noisy = bounded_laplace_mechanism(
            counts[..., first:],
            sensitivity=self.sensitivities()[0],
            epsilon=eps_set,
            lower=0.0,
            upper=data.n,
            rule=self.postprocess,
            rng=rng,
            ledger=ledger,
            statistic=f"set {j + 1}: cell counts",
        )
        hit = at_bound(noisy, 0.0, data.n).any(axis=-1)
        diagnostics = {AT_BOUND: hit}
        if self.public_total:
            rest = np.maximum(data.n - noisy.sum(axis=-1, keepdims=True), 0.0)
            noisy = np.concatenate([rest, noisy], axis=-1)
        if self.allocation == "multinomial":
            total = noisy.sum(axis=-1, keepdims=True)
            p = np.where(total > 0, noisy / np.where(total > 0, total, 1), 1 / noisy.shape[-1])
            return multinomial_counts(data.n, p, rng), diagnostics
        return largest_remainder_round(noisy, data.n), diagnostics
