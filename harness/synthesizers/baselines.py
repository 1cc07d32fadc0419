"""Non-private baselines: the original data (Ori), non-DP multiple synthesis (MS) and the simple
bootstrap of the records."""

from __future__ import annotations

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError
from ..validation import check_number
from .base import SetwiseSynthesizer, Synthesizer
from .registry import register


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


@register
class Bootstrap(Synthesizer):
    """The simple bootstrap reference (a "contingency table" synthesizer): each of m sets is
    ``n_out`` records drawn with replacement from the original records (all n when ``n_out`` is
    None), with their cells, weights and strata. Not private: the released records are
    original records; studies use it as the disclosure-risk and sampling-noise reference."""

    name = "bootstrap"
    private = False
    input_kind = "numeric"

    def __init__(self, n_out: int | None = None, m: int = 1):
        super().__init__(m)
        self.n_out = None if n_out is None else int(
            check_number("n_out", n_out, integer=True, minimum=1))

    def _release(self, data, epsilon, ledger, rng):
        if not isinstance(data, RecordBatch):
            raise ConfigError("data: bootstrap releases records; give a RecordBatch")
        n_out = data.n if self.n_out is None else self.n_out
        index = rng.integers(data.n, size=(data.n_replicates, self.m, n_out))

        def take(a):  # (R, n, ...) -> (R, m, n_out, ...)
            rows = index.reshape(index.shape + (1,) * (a.ndim - 2))
            return np.take_along_axis(a[:, None], rows, axis=2)

        return data._map(take), {}
