"""Two small private methods of the worked example, each built on the exponential mechanism
(McSherry & Talwar 2007) with the score u_k = the count of level k in a stratum, whose
sensitivity under substitution of one record is 1:

* ``example_exp_records`` releases m synthetic sets of records: every synthetic record of
  stratum h draws its outcome by the exponential mechanism on the counts of stratum h. Its
  privacy parameter is the ε of one draw (``epsilon_draw``): the n_h draws of a stratum compose
  sequentially, disjoint strata in parallel, the m sets sequentially, so a set claims
  max_h n_h · ε_draw and the release m times that (n_h is public: the design's sample sizes).
* ``example_private_mode`` releases a model: one outcome label per stratum, chosen by the same
  mechanism (one draw per stratum, strata in parallel); it claims m · ε_draw.

Structural zeros of the schema are never drawn (score −inf).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.data import RecordBatch, group_sums
from harness.privacy import exponential_mechanism
from harness.privacy.ledger import SUBSTITUTION
from harness.synthesizers import Synthesizer, register

STRATUM, OUTCOME = "stratum", "y"  # the schema's columns read here


def outcome(batch: RecordBatch) -> np.ndarray:
    """The outcome codes (..., n) of a batch's records."""
    return batch.values[..., batch.schema.names.index(OUTCOME)].astype(np.int64)


def stratum_counts(data: RecordBatch) -> np.ndarray:
    """Counts (..., H, K) of outcome level k among the records of stratum h."""
    h = len(data.schema.column(STRATUM).levels)
    k = len(data.schema.column(OUTCOME).levels)
    cells = data.strata.astype(np.int64) * k + outcome(data)
    return group_sums(np.ones(cells.shape), cells, h * k).reshape(*cells.shape[:-1], h, k)


def scores(data: RecordBatch) -> np.ndarray:
    """Exponential-mechanism scores (R, H, K): counts, −inf on the schema's structural zeros
    (the mask's axes follow the schema's categorical columns: stratum, then outcome)."""
    counts = stratum_counts(data)
    mask = data.schema.structural_zero_mask()
    if [c.name for c in data.schema.categorical] != [STRATUM, OUTCOME]:
        raise ValueError(f"the schema's categorical columns must be {STRATUM}, {OUTCOME}")
    return np.where(mask, -np.inf, counts)


def stratum_sizes(data: RecordBatch) -> np.ndarray:
    """Records per stratum, the same in every replicate (a public design)."""
    n_strata = len(data.schema.column(STRATUM).levels)
    sizes = group_sums(np.ones(data.strata.shape), data.strata.astype(np.int64), n_strata)
    if not (sizes == sizes[:1]).all():
        raise ValueError("the stratum sample sizes must be the same in every replicate")
    return sizes[0].astype(np.int64)


class _StratumExponential(Synthesizer):
    privacy_parameter = "epsilon_draw"
    neighbour_relation = SUBSTITUTION


@register
class ExponentialRecords(_StratumExponential):
    """Synthetic records, one exponential-mechanism draw per record and stratum."""

    name = "example_exp_records"

    def claimed_epsilon(self, privacy, data=None):
        return self.m * float(stratum_sizes(data).max()) * float(privacy)

    def _release(self, data: RecordBatch, epsilon_draw, ledger, rng):
        u = scores(data)
        r, n = data.strata.shape
        sets = np.empty((r, self.m, n), dtype=float)
        order = np.argsort(data.strata[0], kind="stable")
        for j in range(self.m):
            labels = np.empty((r, n))
            start = 0
            for h, size in enumerate(stratum_sizes(data)):
                rows = order[start:start + size]
                start += size
                draws = np.broadcast_to(u[:, h, None, :], (r, size, u.shape[-1]))
                labels[:, rows] = exponential_mechanism(
                    draws, sensitivity=1.0, epsilon=epsilon_draw, rng=rng,
                    ledger=ledger.for_set(j), statistic=f"outcome of the records of stratum {h}",
                    parallel_group=f"strata of set {j}", draws_axis=1)
            sets[:, j] = labels
        values = np.repeat(data.values[:, None], self.m, axis=1)
        values[..., data.schema.names.index(OUTCOME)] = sets
        release = RecordBatch(values, None, 1, data.columns,
                              np.repeat(data.weights[:, None], self.m, axis=1),
                              np.repeat(data.strata[:, None], self.m, axis=1), data.schema)
        return release, {}


@dataclass(frozen=True)
class StratumLabels:
    """Released models: one outcome label per stratum, ``labels`` (R, m, H)."""

    labels: np.ndarray

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.labels.shape[:2]

    def first_sets(self, m: int) -> StratumLabels:
        return StratumLabels(self.labels[:, :m])

    def predict(self, strata: np.ndarray) -> np.ndarray:
        """Predicted labels (R, m, n) of records in strata (R, n)."""
        return np.take_along_axis(self.labels, strata[:, None, :].astype(np.int64), axis=-1)


@register
class PrivateMode(_StratumExponential):
    """A model: the private modal outcome of every stratum."""

    name = "example_private_mode"
    release_kind = "model"

    def claimed_epsilon(self, privacy, data=None):
        return self.m * float(privacy)

    def _release(self, data: RecordBatch, epsilon_draw, ledger, rng):
        u = scores(data)
        labels = np.stack([
            exponential_mechanism(u, sensitivity=1.0, epsilon=epsilon_draw, rng=rng,
                                  ledger=ledger.for_set(j), statistic="modal outcome per stratum",
                                  parallel_group=f"strata of set {j}", draws_axis=None)
            for j in range(self.m)], axis=1)
        return StratumLabels(labels), {}
