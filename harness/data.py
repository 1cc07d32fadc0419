"""Batch containers: arrays with a leading replicate axis (DESIGN §3).

A :class:`CountBatch` is a batch of categorical data sets summarised exactly by their K-cell
contingency tables. For categorical data and analyses that depend on the records only through
cell counts, the table is a sufficient representation: drawing the counts of n records
(multinomial) is equal in distribution to drawing the n records and tabulating them, which the
tests check against the record-level path (DESIGN §9).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CountBatch:
    """Cell counts of shape (..., K) (leading axes: replicates, then possibly released sets) of
    data sets with a public number of records ``n`` and cell labels ``levels``."""

    counts: np.ndarray
    n: int
    levels: tuple = (0, 1)

    def __post_init__(self):
        if self.counts.shape[-1] != len(self.levels):
            raise ValueError(
                f"counts have {self.counts.shape[-1]} cells but {len(self.levels)} levels"
            )

    @property
    def n_cells(self) -> int:
        return self.counts.shape[-1]

    @property
    def n_replicates(self) -> int:
        return self.counts.shape[0]

    @classmethod
    def from_records(cls, records: Sequence | np.ndarray, levels: Sequence | None = None):
        """Tabulate one ordinary data set (1-D labels, a pandas Series, or a one-column frame)
        into a batch of one replicate. Unknown labels raise a ValueError naming them."""
        values = np.asarray(records).reshape(-1)
        if levels is None:
            levels = np.unique(values)
        levels = tuple(levels.tolist() if isinstance(levels, np.ndarray) else levels)
        index = {lv: k for k, lv in enumerate(levels)}
        unknown = set(values.tolist()) - set(index)
        if unknown:
            raise ValueError(f"records contain labels {sorted(unknown)!r} not in levels {levels}")
        codes = np.fromiter((index[v] for v in values.tolist()), dtype=np.int64)
        counts = np.bincount(codes, minlength=len(levels))[None, :]
        return cls(counts, int(values.size), levels)

    def to_records(self, index: tuple = (0,), rng: np.random.Generator | None = None):
        """Expand the table at ``index`` (e.g. (replicate,) or (replicate, set)) into records in
        random order (or cell order when ``rng`` is None)."""
        counts = self.counts[index]
        records = np.repeat(np.asarray(self.levels, dtype=object), counts)
        if rng is not None:
            records = records[rng.permutation(records.size)]
        try:
            return records.astype(np.asarray(self.levels).dtype)
        except (TypeError, ValueError):
            return records
