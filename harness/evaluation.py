"""Evaluations: what a data user does with a release, judged against the truth or against the
original data.

An evaluation receives the original data of the block (an :class:`harness.data.Original`, with
its parts, e.g. a hold-out set), the release (restricted to its first m sets under nested m) and
the scenario, and returns

* **interval rows** (:class:`IntervalEvaluation`): per released set, estimates and within-set
  variances of named estimands, pooled over the sets by the evaluation's own combining rule;
  aggregation turns them into bias, RMSE, coverage and width; and/or
* **metric rows** (:class:`MetricEvaluation`): scalar values per replicate (TVD, KS, accuracy on
  a hold-out part, CI overlap with the original's interval, ...), aggregated by mean, SD and
  Monte Carlo SE.

Each evaluation declares the release kinds it supports (``records``, ``statistics``, ``model``);
the engine refuses, in one line before anything runs, a study that would hand one a kind it does
not support. Estimand and metric names are unique within a study.

A metric evaluation from another installed package registers through the entry point group
``dips_harness.evaluations`` (a zero-argument factory returning a :class:`MetricEvaluation` or
:class:`IntervalEvaluation`), and a study config adds it by name under ``evaluations``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .errors import ConfigError
from .inference import COMBINING_RULES, Pooled, combine

KINDS = ("records", "statistics", "model")


@dataclass(frozen=True)
class IntervalOutput:
    """What an interval analysis returns: ``estimate`` and ``variance`` of shape (R, m, E) (one
    row of estimands per released set), and optionally per-replicate ``metrics`` and
    ``diagnostics`` (name → (R,) or per set (R, m)) that the same fit produced, e.g. whether a
    model fit separated (they become metric or diagnostic rows; nothing is kept on the study)."""

    estimate: np.ndarray
    variance: np.ndarray
    metrics: Mapping[str, np.ndarray] = field(default_factory=dict)
    diagnostics: Mapping[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class IntervalEvaluation:
    """Estimands with intervals. ``estimands(scenario)`` gives their names (in analysis order)
    and true values; ``analyse(original, release, scenario)`` gives an :class:`IntervalOutput`
    (or a tuple (estimate, variance)) for all M released sets, which the engine pools over the
    first m sets for each m of the method's ``pool_m`` with ``combining_rule``. ``usable(release,
    pooled)`` flags usable (replicate, estimand) pairs (default: the pooled variance is
    positive)."""

    name: str
    estimands: Callable[[Mapping], Mapping[str, float]]
    analyse: Callable
    combining_rule: str = "partial"
    usable: Callable | None = None
    kinds: tuple[str, ...] = ("records",)

    def __post_init__(self):
        if self.combining_rule not in COMBINING_RULES:
            raise ConfigError(f"evaluations.{self.name}.combining_rule: "
                              f"{self.combining_rule!r} is not allowed (allowed: "
                              f"{', '.join(COMBINING_RULES)})")
        _check_kinds(self.name, self.kinds)

    def output(self, original, release, scenario) -> IntervalOutput:
        out = self.analyse(original, release, scenario)
        return out if isinstance(out, IntervalOutput) else IntervalOutput(*out)

    def pool(self, output: IntervalOutput, release, m: int) -> tuple[Pooled, np.ndarray]:
        """Pooled inference over the first ``m`` sets and its usable flags."""
        pooled = combine(output.estimate[:, :m], output.variance[:, :m],
                         rule=self.combining_rule)
        usable = pooled.usable if self.usable is None else self.usable(release, pooled)
        return pooled, usable


@dataclass(frozen=True)
class MetricEvaluation:
    """Scalar metrics per replicate: ``metrics(original, release, scenario)`` → name → values of
    shape (R,) (or (R, m): one per set, averaged over the sets). ``names`` lists the metrics it
    returns (for ``harness list``); ``kinds`` the release kinds it reads."""

    name: str
    metrics: Callable[..., Mapping[str, np.ndarray]]
    kinds: tuple[str, ...] = ("records",)
    names: tuple[str, ...] = ()

    def __post_init__(self):
        _check_kinds(self.name, self.kinds)


Evaluation = IntervalEvaluation | MetricEvaluation


def _check_kinds(name: str, kinds) -> None:
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise ConfigError(f"evaluations.{name}.kinds: {bad[0] if bad else '[]'!r} is not allowed "
                          f"(allowed: {', '.join(KINDS)})")


def per_replicate(values, m: int | None = None) -> np.ndarray:
    """A metric's values as one number per replicate: (R,) as is, per set (R, M, ...) averaged
    over the first ``m`` sets (all when None) and any further axes."""
    v = np.asarray(values, dtype=float)
    if v.ndim >= 2 and m is not None:
        v = v[:, :m]
    return v.reshape(v.shape[0], -1).mean(axis=1)
