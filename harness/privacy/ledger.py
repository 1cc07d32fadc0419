"""Privacy budget ledger with sequential and parallel composition (Bowen & Liu 2020, Thm 2).

Every mechanism call records one :class:`LedgerEntry`. Entries compose sequentially, except
entries that share a ``parallel_group``: those act on disjoint subsets of the records and
compose in parallel (the group costs the maximum ε of its members). A release's total is

    ε_total = Σ_{sequential entries} ε + Σ_{parallel groups} max_{entries in group} ε.

Entries are per release and apply identically to every replicate of a vectorised batch.

Each entry also records the neighbour relation its sensitivity refers to (``add/remove``: one
record added or removed; ``substitution``: one record changed, n public) and, for a
release of m sets that spend separately, the set it belongs to (``set_index``), so that the
first m' of M sets have a composed ε of their own (nested m, :meth:`PrivacyLedger.first_sets`).
An entry without a set index serves every set (a shared stage).

zCDP (Bun & Steinke 2016). An entry of a zCDP mechanism (``gaussian_zcdp``, the exponential
mechanism in ``exponential_zcdp``) records the ρ it spends (``rho``) and ε = 0. ρ composes by
summation (parallel groups count their max), and the release converts the composed ρ to
(ε, δ) at the ledger's stated δ (``zcdp_delta``) with the conversion of :mod:`.zcdp`. A
ledger's total ε is then Σ pure ε + ε(Σ ρ, δ) (basic composition of the pure-ε part with the
converted zCDP part) and its total δ is Σ entry δ + ``zcdp_delta``; a ledger without ρ
entries composes exactly as before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

ADD_REMOVE = "add/remove"
SUBSTITUTION = "substitution"
RELATIONS = (ADD_REMOVE, SUBSTITUTION)


@dataclass(frozen=True)
class LedgerEntry:
    statistic: str
    mechanism: str
    epsilon: float
    sensitivity: float | None = None
    scale: float | None = None
    parallel_group: str | None = None
    note: str = ""
    delta: float = 0.0  # the δ of an (ε, δ) mechanism (Gaussian); 0 for pure ε-DP ones
    relation: str | None = None  # neighbour relation; None: the ledger's (filled on record)
    set_index: int | None = None  # the released set it belongs to; None: every set
    #: what the mechanism really spends when it differs from the ε it claims (``epsilon``): set
    #: only by mechanisms that reproduce a published implementation's mis-scaled noise for
    #: comparison (e.g. ``misscaled_laplace_mechanism``); None: ``epsilon`` is what is spent
    actual_epsilon: float | None = None
    #: the zCDP ρ an entry of a zCDP mechanism spends (its ``epsilon`` is then 0); None: pure
    #: (ε, δ) accounting
    rho: float | None = None


@dataclass
class PrivacyLedger:
    entries: list[LedgerEntry] = field(default_factory=list)
    #: the neighbour relation of entries that do not name their own
    relation: str = ADD_REMOVE
    #: the δ at which the composed ρ of zCDP entries is converted to (ε, δ); needed once the
    #: ledger holds a ρ entry
    zcdp_delta: float | None = None

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {self.relation!r}")

    def record(self, entry: LedgerEntry) -> None:
        if entry.relation is None:
            entry = replace(entry, relation=self.relation)
        if entry.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {entry.relation!r}")
        if entry.rho is not None:
            if not (entry.rho > 0 and math.isfinite(entry.rho)) or entry.epsilon != 0:
                raise ValueError(f"a zCDP ledger entry must spend a finite ρ > 0 and ε = 0, got "
                                 f"ρ = {entry.rho!r}, ε = {entry.epsilon!r}")
        elif not (entry.epsilon > 0 and math.isfinite(entry.epsilon)):
            raise ValueError(f"a ledger entry must spend a finite ε > 0, got {entry.epsilon!r}")
        if not 0 <= entry.delta < 1:
            raise ValueError(f"a ledger entry's δ must lie in [0, 1), got {entry.delta!r}")
        self.entries.append(entry)

    def for_set(self, index: int) -> _SetLedger:
        """A view that records into this ledger with ``set_index=index`` (the spends of one
        released set)."""
        return _SetLedger(self, int(index))

    def first_sets(self, m: int) -> PrivacyLedger:
        """The ledger of the first ``m`` released sets: entries of sets ≥ m are left out, shared
        entries (no set index) kept."""
        kept = [e for e in self.entries if e.set_index is None or e.set_index < m]
        return PrivacyLedger(kept, self.relation, self.zcdp_delta)

    def relations(self) -> tuple[str, ...]:
        """The neighbour relations of the recorded spends (sorted, unique)."""
        return tuple(sorted({e.relation for e in self.entries}))

    def total_epsilon(self) -> float:
        """Composed ε of everything recorded (sequential sum; parallel groups count their max),
        the composed ρ of zCDP entries converted to ε at ``zcdp_delta``."""
        pure = self._compose("epsilon")
        if not self.has_rho:
            return pure
        from .zcdp_conversion import zcdp_epsilon

        return pure + zcdp_epsilon(self.total_rho(), self._zcdp_delta())

    def total_delta(self) -> float:
        """Composed δ (basic composition: sequential sum; parallel groups count their max),
        plus ``zcdp_delta`` when zCDP entries are converted."""
        return self._compose("delta") + (self._zcdp_delta() if self.has_rho else 0.0)

    @property
    def has_rho(self) -> bool:
        """True when some entry spends zCDP ρ."""
        return any(e.rho is not None for e in self.entries)

    def total_rho(self) -> float:
        """Composed ρ of the zCDP entries (summation; parallel groups count their max)."""
        return self._compose("rho")

    def _zcdp_delta(self) -> float:
        if self.zcdp_delta is None:
            raise ValueError("a ledger with zCDP (ρ) entries needs zcdp_delta, the δ of its "
                             "(ε, δ) conversion")
        return self.zcdp_delta

    def _compose(self, field_name: str) -> float:
        total = 0.0
        groups: dict[str, float] = {}
        for e in self.entries:
            value = getattr(e, field_name) or 0.0
            if e.parallel_group is None:
                total += value
            else:
                groups[e.parallel_group] = max(groups.get(e.parallel_group, 0.0), value)
        return total + sum(groups.values())

    @property
    def understated(self) -> bool:
        """True when some entry really spends more than it claims (see ``actual_epsilon``):
        the release is NOT ε-DP at its claimed ε."""
        return any(e.actual_epsilon is not None and e.actual_epsilon > e.epsilon
                   for e in self.entries)

    def actual_total_epsilon(self) -> float:
        """Composed ε of what the mechanisms really spend (``actual_epsilon`` where an entry
        records one, else its claimed ``epsilon``); equals :meth:`total_epsilon` unless the
        ledger is :attr:`understated`."""
        actual = PrivacyLedger([replace(e, epsilon=e.epsilon if e.actual_epsilon is None
                                        else e.actual_epsilon) for e in self.entries],
                               self.relation, self.zcdp_delta)
        return actual.total_epsilon()

    def check_total(self, claimed: float | None, rel_tol: float = 1e-9) -> None:
        """Raise if the composed total differs from the ε the release claims to spend."""
        spent = self.total_epsilon()
        if claimed is None:
            if self.entries:
                raise AssertionError(f"a non-private release recorded spending ε = {spent}")
            return
        if not math.isclose(spent, claimed, rel_tol=rel_tol, abs_tol=0.0):
            raise AssertionError(f"release claims ε = {claimed} but its ledger composes to {spent}")

    def __len__(self) -> int:
        return len(self.entries)


@dataclass
class _SetLedger:
    """Records into ``ledger`` with the entries' ``set_index`` set (see PrivacyLedger.for_set)."""

    ledger: PrivacyLedger
    index: int

    @property
    def relation(self) -> str:
        return self.ledger.relation

    def record(self, entry: LedgerEntry) -> None:
        self.ledger.record(replace(entry, set_index=self.index))
