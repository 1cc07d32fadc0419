"""The benchmark's generic adapter (issue 24 item 2): any coded-records synthesizer
(``input_kind = "coded"``) run on any study that declares a tabular data interface
(:mod:`harness.benchmark.interface`).

``prepare`` encodes the study's train batch as coded records once per task (deterministic),
plus the inner synthesizer's own ε-free stage; ``release`` releases the coded records with the
inner synthesizer at the ε the study's privacy value stands for, and decodes each released set
back into the study's batch type (numeric values uniform within their bins, from the method's
stream), so the study's evaluations run unchanged. The release carries the inner synthesizer's
ledger, neighbour relation and diagnostics.

On a study whose privacy axis is not ε (a Lipschitz bound, an ε per synthetic record), the
study declares ``epsilon_per_privacy``: the adapter releases at ε = epsilon_per_privacy × the
swept value (e.g. 2Δ, the ε of the survey paper's pseudo posteriors at m = 1), and its rows
carry that ε as their realised ε.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..benchmark.interface import TabularInterface
from ..errors import ConfigError
from ..validation import check_number
from .base import Release, Synthesizer
from .registry import make_synthesizer, register


@register
class TabularAdapter(Synthesizer):
    """``inner``: the roster entry of a coded-records synthesizer (``{synthesizer: name,
    ...params}``); ``interface``: the study's :class:`TabularInterface` (given by the study,
    ``Study.synthesizer``); ``privacy_parameter`` the study's privacy axis and
    ``epsilon_per_privacy`` the ε one unit of it stands for."""

    name = "tabular"
    uses_prepare = True
    #: any study's train batch that its data interface encodes (counts or records)
    input_kind = "study"

    def __init__(self, inner: Mapping | None = None, interface: TabularInterface | None = None,
                 privacy_parameter: str = "epsilon", epsilon_per_privacy: float = 1.0):
        if not isinstance(inner, Mapping) or not inner.get("synthesizer"):
            raise ConfigError("inner: give the wrapped synthesizer as {synthesizer: <name>, ...}")
        params = dict(inner)
        name = params.pop("synthesizer")
        self.inner = make_synthesizer(name, key="inner", **params)
        kind = getattr(self.inner, "input_kind", None)
        if kind != "coded" or self.inner.release_kind != "records":
            raise ConfigError(f"inner.synthesizer: {name} takes {kind!r} data and releases "
                              f"{self.inner.release_kind}; the tabular interface needs a "
                              f"synthesizer of coded records (input_kind 'coded') releasing "
                              f"records")
        if self.inner.privacy_parameter != "epsilon":
            raise ConfigError(f"inner.synthesizer: {name} takes "
                              f"{self.inner.privacy_parameter!r}, not epsilon")
        self.m = self.inner.m
        self.private = self.inner.private
        self.neighbour_relation = self.inner.neighbour_relation
        self.interface = interface or TabularInterface()
        self.privacy_parameter = str(privacy_parameter)
        self.epsilon_per_privacy = float(check_number(
            "epsilon_per_privacy", epsilon_per_privacy, open_interval=(0, float("inf"))))

    def native_relations(self) -> tuple[str, ...]:
        return self.inner.native_relations()

    def supported_relations(self) -> tuple[str, ...]:
        return self.inner.supported_relations()

    def calibrate(self, relation, label: str = "", delta=None):
        """Calibrate the wrapped synthesizer (its ledger is the release's)."""
        self.inner.calibrate(relation, label, delta)
        self.neighbour_relation = self.inner.neighbour_relation
        return self

    def claimed_epsilon(self, privacy: float, data=None) -> float:
        return self.epsilon_per_privacy * float(privacy)

    def prepare(self, data, rng, parts: dict | None = None):
        """The coded records (ε-free, deterministic) and the inner synthesizer's ε-free stage."""
        layout = self.interface.layout(data)
        coded = self.interface.encode(data, layout)
        inner = self.inner.prepare(coded, rng) if self.inner.uses_prepare else None
        return layout, coded, inner

    def release(self, data, privacy, rng, prepared=None, parts: dict | None = None) -> Release:
        layout, coded, inner_prepared = self.prepare(data, rng) if prepared is None else prepared
        epsilon = None if privacy is None else self.claimed_epsilon(privacy)
        kwargs = {"prepared": inner_prepared} if self.inner.uses_prepare else {}
        rel = self.inner.release(coded, epsilon, rng, **kwargs)
        sets = self.interface.decode(rel.sets, layout, rng)
        return Release(sets, privacy, rel.ledger, rel.diagnostics, "records", rel.claimed)

    def _release(self, data, epsilon, ledger, rng):  # pragma: no cover - release() is whole
        raise NotImplementedError("TabularAdapter overrides release()")
