"""EXM, the exponential-mechanism competitor of Bi & Shen (spec 004 §2; McSherry & Talwar 2007),
in a study that sweeps ε.

The paper releases n i.i.d. draws with P(a) ∝ exp(ε·q(a)/(2Δ)), q(a) the frequency of value a
among the observed values, Δ "approximated by the maximum value of a sample" (App. S2, MovieLens
paragraph; spec §2), at the same ε as its other methods. That ε is the ε of *one* draw: n draws
on the same data compose to n·ε. :class:`SweptEXM` puts the harness's ``exm`` synthesizer on a
study's ε axis in one of two readings (``epsilon_is``):

* ``per_draw`` — the paper's calibration: the swept ε is each draw's ε. The release claims, and
  its rows carry as their realised ε, n·ε (e.g. 1000 at ε = 1 in S1); the tables print EXM at the
  swept ε beside the other methods, as the paper does, and say so;
* ``total`` — the comparison at equal ε: each draw at ε/n, so the release claims the swept ε.

Either way the candidates (the observed values) and Δ (the sample maximum) are read from the
data, which no ε claim covers; the ledger notes it (``harness.synthesizers.record_noise``), and
the audit in :mod:`.audit` shows the observed support breaking the claim."""

from __future__ import annotations

import inspect

from harness.errors import ConfigError, allowed
from harness.synthesizers.record_noise import ExponentialRecords

EPSILON_IS = ("per_draw", "total")


class SweptEXM(ExponentialRecords):
    """``exm`` whose privacy parameter is the study's ε, read as ``epsilon_is`` says."""

    privacy_parameter = "epsilon"

    def __init__(self, m: int = 1, quality: str = "count", support="observed",
                 sensitivity="max", epsilon_is: str = "per_draw"):
        super().__init__(m, quality, support, sensitivity)
        if epsilon_is not in EPSILON_IS:
            raise allowed("epsilon_is", epsilon_is, EPSILON_IS)
        self.epsilon_is = epsilon_is

    def claimed_epsilon(self, privacy, data=None) -> float:
        if self.epsilon_is == "per_draw":
            return super().claimed_epsilon(privacy, data)  # n draws of ε each
        return float(privacy)

    def _one_set(self, data, eps_set, ledger, rng, j):
        per_draw = eps_set if self.epsilon_is == "per_draw" else eps_set / data.n
        return super()._one_set(data, per_draw, ledger, rng, j)


def make_exm(key: str, params: dict) -> SweptEXM:
    """The roster entry's EXM (``synthesizer: exm``) on the study's ε axis; bad parameters are
    one line naming ``key``."""
    accepted = [p for p in inspect.signature(SweptEXM.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ConfigError(f"{key}.{unknown[0]}: unknown parameter of exm (allowed: "
                          f"{', '.join(accepted)})")
    try:
        return SweptEXM(**params)
    except ConfigError as exc:
        raise ConfigError(f"{key}.{exc}") from None
