"""The synthesizer interface and the release container (the registry of synthesizers by name is
:mod:`harness.synthesizers.registry`).

A synthesizer is configured with its parameters; ``release(data, privacy, rng)`` returns a
:class:`Release` of m sets per replicate and the privacy ledger of the release. ``privacy`` is
the value of the synthesizer's privacy parameter (``privacy_parameter``: ε by default; e.g. a
Lipschitz bound or an ε per synthetic record for other methods), and ``claimed_epsilon`` says
what total ε that value claims. Non-private baselines (Ori, MS) take ``privacy=None`` through
the same interface. Every release checks that its ledger composes to exactly the ε it claims.

A release is of one of three kinds (``release_kind``): ``records`` (synthetic data sets: a
:class:`CountBatch` or :class:`RecordBatch` with leading axes (R, m)), ``statistics`` (noisy
tables or summaries) or ``model`` (fitted private models, e.g. classifiers). Statistics and
models are objects with ``batch_shape`` (R, m, ...) and ``first_sets(m)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from ..data import CountBatch, RecordBatch, stack_sets
from ..errors import ConfigError, allowed
from ..privacy import PrivacyLedger
from ..privacy.ledger import ADD_REMOVE, RELATIONS, SUBSTITUTION
from ..privacy.relation import DEFAULT_DELTA
from ..validation import check_number

RELEASE_KINDS = ("records", "statistics", "model")

#: diagnostic of noise-adding synthesizers: the set's sanitized statistic was post-processed to a
#: public bound (BIT), the mechanism behind the truncation bias discussed by Bowen & Liu §4.1
AT_BOUND = "sanitized_at_bound"


@dataclass
class Release:
    """m released sets per replicate (``sets`` has leading axes (R, m)) of kind ``kind``, the
    privacy value they were released at (``privacy``; None for a non-private baseline), the ε
    that value claims (``claimed``), the privacy ledger, and diagnostics: name → array of shape
    (R,) or (R, m) (one value per set)."""

    sets: object
    privacy: float | None
    ledger: PrivacyLedger
    diagnostics: dict[str, np.ndarray] = field(default_factory=dict)
    kind: str = "records"
    claimed: float | None = None

    @property
    def m(self) -> int:
        return self.sets.batch_shape[1]

    @property
    def epsilon(self) -> float | None:
        """The realised ε of the whole release (None for a non-private one)."""
        return self.realised_epsilon(self.m)

    def realised_epsilon(self, m: int) -> float | None:
        """Composed ε of the first ``m`` sets (rows carry the realised ε). For the
        whole release it is the claimed ε exactly (the ledger was checked to compose to it up
        to rounding), so rows of an ε sweep carry the swept ε bit for bit."""
        if self.privacy is None:
            return None
        if m == self.m and self.claimed is not None:
            return self.claimed
        return self.ledger.first_sets(m).total_epsilon()

    def first_sets(self, m: int) -> Release:
        """The release of its first ``m`` sets (nested m): sets, per-set diagnostics
        and the ledger restricted to them."""
        if m == self.m:
            return self
        if not 1 <= m <= self.m:
            raise ValueError(f"m must lie in 1..{self.m}, got {m}")
        diagnostics = {k: (v[:, :m] if np.ndim(v) >= 2 and np.shape(v)[1] == self.m else v)
                       for k, v in self.diagnostics.items()}
        return Release(self.sets.first_sets(m), self.privacy, self.ledger.first_sets(m),
                       diagnostics, self.kind, self.realised_epsilon(m))


class Synthesizer(ABC):
    """Base class. Subclasses set ``name`` and ``private`` and implement ``_release``."""

    name: ClassVar[str]
    private: ClassVar[bool] = True
    #: what a release holds: "records", "statistics" or "model" (``RELEASE_KINDS``)
    release_kind: ClassVar[str] = "records"
    #: the privacy parameter ``release`` takes; a study's privacy axis must name it
    privacy_parameter: ClassVar[str] = "epsilon"
    #: the neighbour relation the release's sensitivities refer to (recorded in its ledger):
    #: the method's own, or the one :meth:`calibrate` set (``study.relation``)
    neighbour_relation: ClassVar[str] = ADD_REMOVE
    #: the relations the method's mechanisms are calibrated for (``native_relations``); None:
    #: those of its :meth:`sensitivities` (Sensitivity objects), else its own relation only
    relations: ClassVar[tuple[str, ...] | None] = None
    #: parts of the original batch besides ``train`` that the method reads (e.g. "holdout");
    #: the engine passes them as ``parts=``
    needs_parts: ClassVar[tuple[str, ...]] = ()

    #: the mechanisms of ``harness.privacy.ranges.MECHANISM_RANGE`` this method calls (None:
    #: any of them); a method that names fewer may sweep a wider range of privacy values
    mechanisms: ClassVar[tuple[str, ...] | None] = None

    def privacy_range(self) -> tuple[float, float]:
        """The values of ``privacy_parameter`` for which the mechanisms this method calls stay
        finite (``harness.privacy.ranges``); a study's privacy values are checked against it
        before anything runs."""
        from ..privacy.ranges import method_range

        return method_range(self.mechanisms)

    def claimed_epsilon(self, privacy: float, data=None) -> float:
        """The total ε a release of ``data`` at privacy value ``privacy`` claims; for ε itself,
        ε. Methods whose ε follows from public facts of the data (e.g. an ε per synthetic
        record times the public number of records) read them from ``data``."""
        return float(privacy)

    def __init__(self, m: int = 1):
        self.m = int(check_number("m", m, integer=True, minimum=1))

    def sensitivities(self) -> list:
        """The :class:`~harness.privacy.Sensitivity` objects the method's mechanisms take (they
        resolve them under the ledger's relation); default: none."""
        return []

    def native_relations(self) -> tuple[str, ...]:
        """The neighbour relations the method's own mechanisms are calibrated for: ``relations``
        when declared, else those every one of :meth:`sensitivities` has a value under, else
        the method's own."""
        if self.relations is not None:
            return tuple(self.relations)
        found = self.sensitivities()
        if found:
            return tuple(r for r in RELATIONS if all(r in s.relations() for s in found))
        return (self.neighbour_relation,)

    def supported_relations(self) -> tuple[str, ...]:
        """The neighbour relations this configured method can be calibrated under: its native
        ones, and substitution by group privacy for a pure ε-DP method calibrated under
        add/remove only (:meth:`_group_privacy_release`)."""
        native = self.native_relations()
        if native == (ADD_REMOVE,) and self.group_privacy:
            return RELATIONS
        return native

    #: the claimed ε is proportional to the privacy value (a release at half the value claims
    #: half the ε), so an add/remove-only method is calibrated under substitution by group
    #: privacy (:meth:`_group_privacy_release`); the release's ledger check guards it
    group_privacy: ClassVar[bool] = True

    #: the δ at which a method with δ > 0 (Gaussian noise, zCDP's ρ converted to (ε, δ)) is
    #: calibrated; pure ε-DP methods ignore it. ``study.delta`` sets it (``calibrate``).
    target_delta: float = DEFAULT_DELTA

    def calibrate(self, relation: str | None, label: str = "",
                  delta: float | None = None) -> Synthesizer:
        """Calibrate every mechanism of the release under ``relation`` (None: the method's own,
        unchanged); the ledger records it. A non-private method spends nothing and takes any
        relation. A method without a calibration under ``relation`` raises a one-line
        ConfigError naming it and the relations it supports. ``delta`` (None: unchanged) is
        the stated δ of methods with δ > 0 (``target_delta``). Returns self."""
        if delta is not None:
            self.target_delta = float(delta)
        if relation is None:
            return self
        if relation not in RELATIONS:
            raise allowed("study.relation", relation, RELATIONS)
        if not self.private:
            return self
        supported = self.supported_relations()
        if relation not in supported:
            who = f"{label} ({self.name})" if label and label != self.name else self.name
            raise ConfigError(f"study.relation: method {who} has no calibration under "
                              f"{relation} (supports: {', '.join(supported)})")
        self.by_group_privacy = relation not in self.native_relations()
        self.neighbour_relation = relation
        return self

    #: True when :meth:`calibrate` set substitution on a method calibrated under add/remove only
    by_group_privacy: bool = False

    def _group_privacy_release(self, data, privacy, ledger, rng, **kwargs):
        """Substitution by group privacy (Dwork & Roth 2014, Thm 2.2): a changed record is one
        removal and one addition, so an ε/2-DP release under add/remove is ε-DP under
        substitution. The method releases at half its privacy value (ε/2, or e.g. half the ε per
        synthetic record) into an add/remove ledger; every entry is
        recorded under substitution at twice its ε (and twice its l1 sensitivity: the same
        noise, for a Laplace mechanism exactly the substitution calibration 2Δ). Doubling is
        exact in floating point, so the ledger composes to the claimed ε as exactly as before.
        Only pure ε-DP entries convert (δ > 0 would need δ(1 + e^ε)); the conversion inherits
        the add/remove guarantee's conditions (e.g. n public)."""
        own = PrivacyLedger(relation=ADD_REMOVE)
        sets, diagnostics = self._release(data, privacy / 2.0, own, rng, **kwargs)
        # the halved privacy value claims half the ε (``group_privacy``)
        own.check_total(self.claimed_epsilon(privacy / 2.0, data))
        for e in own.entries:
            if e.delta > 0:
                raise ConfigError(f"study.relation: method {self.name} spends δ > 0; group "
                                  f"privacy does not calibrate it under substitution")
            note = "substitution by group privacy: add/remove at ε/2"
            ledger.record(replace(
                e, epsilon=2.0 * e.epsilon, relation=SUBSTITUTION,
                sensitivity=None if e.sensitivity is None else 2.0 * e.sensitivity,
                actual_epsilon=None if e.actual_epsilon is None else 2.0 * e.actual_epsilon,
                note=f"{e.note}; {note}" if e.note else note))
        return sets, diagnostics

    def set_budget(self, epsilon: float) -> float:
        """Per-set budget ε/m: m sets on the same data compose sequentially (Bowen & Liu §4)."""
        return epsilon / self.m

    #: True for synthesizers with an ε-free first stage (e.g. posterior draws given the data)
    #: that ``prepare`` computes once per task and every ``release`` at the ε grid reuses
    uses_prepare: ClassVar[bool] = False

    def prepare(self, data: CountBatch | RecordBatch, rng, parts: dict | None = None):
        """The ε-free part of a release, computed once per (task, method) from its own named
        stream (``harness.rng.prepare_stream``) before the ε loop; ``release(...,
        prepared=...)`` reuses it. Synthesizers with ``needs_parts`` receive the original
        data's other parts (``parts``) here too. Default: nothing (synthesizers with
        ``uses_prepare`` override)."""
        return None

    def release(self, data: CountBatch | RecordBatch, privacy: float | None, rng,
                prepared=None, parts: dict | None = None):
        """m released sets per replicate at privacy value ``privacy`` (the total ε for
        ε-parameterised methods). Synthesizers with ``uses_prepare`` take the result of
        ``prepare`` (computed here from ``rng`` when not given, e.g. in notebook use); those
        with ``needs_parts`` take the original batch's other parts (``parts``)."""
        key = self.privacy_parameter
        if self.private:
            if privacy is None or not (np.isfinite(privacy) and privacy > 0):
                raise ConfigError(f"{key}: {self.name} needs a finite {key} > 0, got {privacy!r}")
        elif privacy is not None:
            raise ConfigError(f"{key}: {self.name} is not private and takes {key}=None")
        missing = [p for p in self.needs_parts if p not in (parts or {})]
        if missing:
            raise ConfigError(f"parts: {self.name} needs the original data's part "
                              f"{missing[0]!r} (the study's generate returns none)")
        ledger = PrivacyLedger(relation=self.neighbour_relation)
        kwargs = {"parts": parts} if self.needs_parts else {}
        if self.uses_prepare:
            kwargs["prepared"] = (self.prepare(data, rng, **kwargs) if prepared is None
                                  else prepared)
        run = self._group_privacy_release if self.by_group_privacy else self._release
        sets, diagnostics = run(data, privacy, ledger, rng, **kwargs)
        claimed = None if privacy is None else self.claimed_epsilon(privacy, data)
        ledger.check_total(claimed)
        return Release(sets, privacy, ledger, diagnostics, self.release_kind, claimed)

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
        per_set = [self._one_set(data, eps_set, ledger.for_set(j), rng, j)
                   for j in range(self.m)]
        sets = stack_sets(data, [s for s, _ in per_set])
        diagnostics = {}
        for key in per_set[0][1]:
            diagnostics[key] = np.stack([d[key] for _, d in per_set], axis=1)
        return sets, diagnostics

    @abstractmethod
    def _one_set(self, data, eps_set, ledger, rng, j) -> tuple[np.ndarray, dict]:
        """Synthetic set j with leading replicate axis R (cell counts (R, K) of categorical data,
        or a :class:`RecordBatch`) and its diagnostics (arrays with leading axis R)."""
