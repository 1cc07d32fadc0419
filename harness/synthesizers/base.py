"""The synthesizer interface, the release container and the synthesizer registry (DESIGN §3).

A synthesizer is configured with its parameters; ``release(data, epsilon, rng)`` returns a
:class:`Release` with m synthetic data sets per replicate and the privacy ledger of the release.
Non-private baselines (Ori, MS) take ``epsilon=None`` through the same interface. Every release
checks that its ledger composes to exactly the ε it claims.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..data import CountBatch, RecordBatch, stack_sets
from ..errors import ConfigError, allowed
from ..privacy import PrivacyLedger
from ..validation import check_number

REGISTRY: dict[str, type[Synthesizer]] = {}

#: diagnostic of noise-adding synthesizers: the set's sanitized statistic was post-processed to a
#: public bound (BIT), the mechanism behind the truncation bias discussed by Bowen & Liu §4.1
AT_BOUND = "sanitized_at_bound"


def register(cls: type[Synthesizer]) -> type[Synthesizer]:
    """Class decorator: make a synthesizer available by its ``name``."""
    if cls.name in REGISTRY:
        raise RuntimeError(f"synthesizer {cls.name!r} registered twice")
    REGISTRY[cls.name] = cls
    return cls


def make_synthesizer(name: str, key: str = "", **params) -> Synthesizer:
    """Instantiate a registered synthesizer; unknown names or parameters and invalid values raise
    a ConfigError whose key starts with ``key`` (e.g. ``study.roster.LAP``)."""
    prefix = f"{key}." if key else ""
    if name not in REGISTRY:  # perhaps a plug-in's (harness/plugins.py)
        from ..plugins import require

        require(name, prefix)
    if name not in REGISTRY:
        raise allowed(f"{prefix}synthesizer", name, sorted(REGISTRY))
    cls = REGISTRY[name]
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ConfigError(
            f"{prefix}{unknown[0]}: unknown parameter of {name} (allowed: {', '.join(accepted)})"
        )
    try:
        return cls(**params)
    except ConfigError as exc:
        raise ConfigError(f"{prefix}{exc}") from None


@dataclass
class Release:
    """m synthetic data sets per replicate (``sets`` has leading axes (R, m)), the privacy
    ledger, and diagnostics: name → array of shape (R,) or (R, m) (one value per set)."""

    sets: CountBatch | RecordBatch
    epsilon: float | None
    ledger: PrivacyLedger
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def m(self) -> int:
        return self.sets.batch_shape[1]


class Synthesizer(ABC):
    """Base class. Subclasses set ``name`` and ``private`` and implement ``_release``."""

    name: ClassVar[str]
    private: ClassVar[bool] = True

    def __init__(self, m: int = 1):
        self.m = int(check_number("m", m, integer=True, minimum=1))

    def set_budget(self, epsilon: float) -> float:
        """Per-set budget ε/m: m sets on the same data compose sequentially (Bowen & Liu §4)."""
        return epsilon / self.m

    #: True for synthesizers with an ε-free first stage (e.g. posterior draws given the data)
    #: that ``prepare`` computes once per task and every ``release`` at the ε grid reuses
    uses_prepare: ClassVar[bool] = False

    def prepare(self, data: CountBatch | RecordBatch, rng):
        """The ε-free part of a release, computed once per (task, method) from its own named
        stream (``harness.rng.prepare_stream``) before the ε loop; ``release(...,
        prepared=...)`` reuses it. Default: nothing (synthesizers with ``uses_prepare``
        override)."""
        return None

    def release(self, data: CountBatch | RecordBatch, epsilon: float | None, rng,
                prepared=None):
        """m synthetic sets per replicate at total budget ``epsilon``. Synthesizers with
        ``uses_prepare`` take the result of ``prepare`` (computed here from ``rng`` when not
        given, e.g. in notebook use)."""
        if self.private:
            if epsilon is None or not (np.isfinite(epsilon) and epsilon > 0):
                raise ConfigError(f"epsilon: {self.name} needs a finite ε > 0, got {epsilon!r}")
        elif epsilon is not None:
            raise ConfigError(f"epsilon: {self.name} is not private and takes epsilon=None")
        ledger = PrivacyLedger()
        if self.uses_prepare:
            if prepared is None:
                prepared = self.prepare(data, rng)
            sets, diagnostics = self._release(data, epsilon, ledger, rng, prepared=prepared)
        else:
            sets, diagnostics = self._release(data, epsilon, ledger, rng)
        ledger.check_total(epsilon)
        return Release(sets, epsilon, ledger, diagnostics)

    @abstractmethod
    def _release(self, data, epsilon, ledger, rng) -> tuple[CountBatch | RecordBatch, dict]:
        """Return the synthetic sets (leading axes (R, m)) and a diagnostics dict."""

    #: what ``synthesize`` builds from plain records: "categorical" (a CountBatch of labels) or
    #: "numeric" (a RecordBatch); synthesizers of numeric data set "numeric"
    input_kind: ClassVar[str] = "categorical"

    def synthesize(self, records, epsilon: float | None = None, *, seed=None, levels=None):
        """Release m synthetic versions of one ordinary data set (notebook use).

        ``records`` is a 1-D sequence of category labels (categorical synthesizers), a numeric
        array or DataFrame (numeric synthesizers), or a ready :class:`CountBatch` /
        :class:`RecordBatch` of one replicate (e.g. ``RecordBatch.from_records(frame,
        cell_column="cell")`` for mixed data). Returns a list of m synthetic data sets: arrays
        of labels, or DataFrames of numeric records.
        """
        if isinstance(records, (CountBatch, RecordBatch)):
            data = records
        elif self.input_kind == "numeric":
            data = RecordBatch.from_records(records)
        else:
            data = CountBatch.from_records(records, levels)
        rng = np.random.default_rng(seed)
        rel = self.release(data, epsilon, rng)
        return [rel.sets.to_records((0, j), rng) for j in range(rel.m)]

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({params})"


class SetwiseSynthesizer(Synthesizer):
    """A synthesizer whose m sets are independent releases, each spending ε/m (sequential
    composition). Subclasses implement ``_one_set``; this class stacks the sets."""

    def _release(self, data, epsilon, ledger, rng):
        eps_set = None if epsilon is None else self.set_budget(epsilon)
        per_set = [self._one_set(data, eps_set, ledger, rng, j) for j in range(self.m)]
        sets = stack_sets(data, [s for s, _ in per_set])
        diagnostics = {}
        for key in per_set[0][1]:
            diagnostics[key] = np.stack([d[key] for _, d in per_set], axis=1)
        return sets, diagnostics

    @abstractmethod
    def _one_set(self, data, eps_set, ledger, rng, j) -> tuple[np.ndarray, dict]:
        """Synthetic set j with leading replicate axis R (cell counts (R, K) of categorical data,
        or a :class:`RecordBatch`) and its diagnostics (arrays with leading axis R)."""
