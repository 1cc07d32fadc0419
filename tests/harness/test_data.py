"""CountBatch: tabulating records and expanding tables back."""

import numpy as np
import pytest

from harness.data import CountBatch


def test_round_trip_records():
    b = CountBatch.from_records(["x", "y", "y", "x", "y"], levels=["x", "y"])
    assert b.counts.tolist() == [[2, 3]] and b.n == 5
    rec = b.to_records((0,), np.random.default_rng(0))
    assert sorted(rec.tolist()) == ["x", "x", "y", "y", "y"]


def test_unknown_label_is_named():
    with pytest.raises(ValueError, match="'z'"):
        CountBatch.from_records(["x", "z"], levels=["x", "y"])


def test_levels_must_match_cells():
    with pytest.raises(ValueError):
        CountBatch(np.zeros((1, 3), dtype=int), 10, levels=(0, 1))
