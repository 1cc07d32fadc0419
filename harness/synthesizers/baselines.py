"""Non-private baselines: the original data (Ori) and non-DP multiple synthesis (MS)."""

from __future__ import annotations

from ..errors import ConfigError
from .base import SetwiseSynthesizer, Synthesizer, register


@register
class Original(Synthesizer):
    """The original data released as is (one set): the "Ori" benchmark of every figure."""

    name = "ori"
    private = False

    def __init__(self, m: int = 1):
        super().__init__(m)
        if self.m != 1:
            raise ConfigError(f"m: ori releases exactly one set, so m must be 1, got {m!r}")

    def _release(self, data, epsilon, ledger, rng):
        return data.with_set_axis(), {}


@register
class MultipleSynthesis(SetwiseSynthesizer):
    """Non-DP multiple synthesis (Rubin 1993; Bowen & Liu §2.7, §4.1): per set, θ ~ f(θ | s)
    from the exact sufficient statistics, then x̃ ~ f(x | θ)."""

    name = "ms"
    private = False

    def __init__(self, model, m: int = 5):
        super().__init__(m)
        self.model = model

    def _one_set(self, data, eps_set, ledger, rng, j):
        stats = {s.name: s.value for s in self.model.sufficient_statistics(data)}
        theta = self.model.posterior_draw(stats, data, rng)
        return self.model.predictive_draw(theta, data, rng), {}
