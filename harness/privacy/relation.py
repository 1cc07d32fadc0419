"""Sensitivities under both neighbour relations (issue 24 item 3, equal privacy).

A mechanism's noise is calibrated to the sensitivity of its statistic under the neighbour
relation of the release's ledger: ``add/remove`` (one record added or removed) or
``substitution`` (one record changed, n public). A :class:`Sensitivity` holds the value under
each relation the statistic has a calibration for; a mechanism handed one resolves it against
its ledger's relation (:func:`resolve`), so a synthesizer calibrated under another relation
(``Synthesizer.calibrate``, config key ``study.relation``) changes no code of its own.

Conversions used here (Dwork & Roth 2014, §2.3 and group privacy):

* a substitution is a removal followed by an addition, so by the triangle inequality a
  statistic of add/remove sensitivity Δ has substitution sensitivity at most 2Δ
  (:meth:`Sensitivity.declared`); for a histogram both bounds are attained: Δ = 1 and 2
  (:meth:`Sensitivity.counts`);
* the reverse has no general form: under add/remove n is not public, so a sensitivity that
  needs n (a mean, a mutual information) has an add/remove form only where the method
  derives one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .ledger import ADD_REMOVE, RELATIONS, SUBSTITUTION

#: the δ at which methods with δ > 0 are compared with pure ε-DP ones unless ``study.delta``
#: states another (issue 24 item 3)
DEFAULT_DELTA = 1e-5


class UnsupportedRelation(ValueError):
    """A sensitivity has no value under the relation asked for."""


@dataclass(frozen=True)
class Sensitivity:
    """The sensitivity of one statistic under each neighbour relation it has a calibration for
    (None: no valid calibration under that relation). Values may be arrays (one per element)."""

    add_remove: object = None
    substitution: object = None

    def __post_init__(self):
        if self.add_remove is None and self.substitution is None:
            raise ValueError("a Sensitivity needs a value under at least one relation")

    def under(self, relation: str):
        """The value under ``relation``; :class:`UnsupportedRelation` when it has none."""
        if relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
        value = self.add_remove if relation == ADD_REMOVE else self.substitution
        if value is None:
            raise UnsupportedRelation(
                f"no sensitivity under {relation} (calibrated under: "
                f"{', '.join(self.relations())})")
        return value

    def _map(self, fn) -> Sensitivity:
        return Sensitivity(*(None if v is None else fn(v)
                             for v in (self.add_remove, self.substitution)))

    def __mul__(self, factor) -> Sensitivity:
        """Both values times ``factor`` (e.g. a statistic scaled by a public constant)."""
        return self._map(lambda v: v * factor)

    __rmul__ = __mul__

    def __truediv__(self, divisor) -> Sensitivity:
        return self._map(lambda v: v / divisor)

    def relations(self) -> tuple[str, ...]:
        """The relations with a value, in ``RELATIONS`` order."""
        return tuple(r for r in RELATIONS
                     if (self.add_remove if r == ADD_REMOVE else self.substitution) is not None)

    @classmethod
    def counts(cls, per_record: float = 1.0) -> Sensitivity:
        """A histogram (disjoint cells, each record in one cell, counted with weight
        ``per_record``): l1 sensitivity ``per_record`` under add/remove (one count moves by
        one), 2·``per_record`` under substitution (one count down, another up)."""
        return cls(float(per_record), 2.0 * float(per_record))

    @classmethod
    def declared(cls, value, relation: str) -> Sensitivity:
        """A sensitivity a method declares under ``relation``: under add/remove it also gives
        the substitution bound 2·value (triangle inequality); under substitution there is no
        add/remove value (n would have to be public)."""
        if relation == ADD_REMOVE:
            return cls(value, 2.0 * np.asarray(value, dtype=float) if np.ndim(value)
                       else 2.0 * float(value))
        if relation == SUBSTITUTION:
            return cls(None, value)
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")


def resolve(sensitivity, ledger):
    """The value of ``sensitivity`` under the relation of ``ledger``: a :class:`Sensitivity` is
    resolved; a plain number refers to the ledger's relation already (a method with one
    calibration) and is returned as is."""
    if isinstance(sensitivity, Sensitivity):
        return sensitivity.under(ledger.relation)
    return sensitivity


def entropy_add_remove_bound(n: int) -> float:
    """The largest change of the plug-in entropy (nats) of any discrete variable when one record
    is added to n ≥ 1 records (or removed from n + 1), over every domain:

        h(n) = (ln(n + 1) + n ln(1 + 1/n)) / (n + 1).

    Derivation (ours): with g(x) = x ln x and counts c, n·H = g(n) − Σ g(c_i). Adding a record
    to cell j gives (n + 1)H' − nH = [g(n + 1) − g(n)] − [g(c_j + 1) − g(c_j)], which lies in
    [0, g(n + 1) − g(n)] since g(x + 1) − g(x) increases from 0 (x = 0) to g(n + 1) − g(n)
    (x = n). So H' − H = ((n + 1)H' − nH − H)/(n + 1) lies in [−H/(n + 1), (g(n + 1) − g(n))/
    (n + 1)], and H ≤ ln n ≤ g(n + 1) − g(n)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    return (math.log(n + 1) + n * math.log1p(1.0 / n)) / (n + 1)
