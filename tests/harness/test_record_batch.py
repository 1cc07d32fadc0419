"""RecordBatch: the container of numeric and mixed (cell × numeric) data sets, and group sums."""

import numpy as np
import pandas as pd
import pytest

from harness.data import CountBatch, RecordBatch, group_sums, stack_sets


def test_group_sums_match_a_plain_loop():
    rng = np.random.default_rng(1)
    cells = rng.integers(0, 5, size=(3, 4, 50))
    x = rng.normal(size=(3, 4, 50, 2))
    got = group_sums(x, cells, 5)
    assert got.shape == (3, 4, 5, 2)
    for r in range(3):
        for j in range(4):
            for k in range(5):
                np.testing.assert_allclose(got[r, j, k], x[r, j][cells[r, j] == k].sum(axis=0))
    counts = group_sums(np.ones(cells.shape), cells, 5)
    np.testing.assert_array_equal(counts.sum(axis=-1), 50)


def test_cell_counts_set_axis_and_stacking():
    rng = np.random.default_rng(2)
    cells = rng.integers(0, 3, size=(4, 10))
    batch = RecordBatch(rng.normal(size=(4, 10, 2)), cells, 3, ("z1", "z2"))
    assert batch.n == 10 and batch.n_columns == 2 and batch.batch_shape == (4,)
    np.testing.assert_array_equal(
        batch.cell_counts(), np.stack([np.bincount(c, minlength=3) for c in cells])
    )
    one = batch.with_set_axis()
    assert one.batch_shape == (4, 1) and one.cells.shape == (4, 1, 10)
    stacked = stack_sets(batch, [batch, batch, batch])
    assert isinstance(stacked, RecordBatch) and stacked.batch_shape == (4, 3)
    np.testing.assert_array_equal(stacked.values[:, 2], batch.values)
    counts = stack_sets(CountBatch(np.array([[1, 2]]), 3), [np.array([[1, 2]])] * 2)
    assert isinstance(counts, CountBatch) and counts.counts.shape == (1, 2, 2)


def test_round_trip_through_records():
    frame = pd.DataFrame({"cell": [0, 2, 1, 2], "z1": [0.5, 1.0, -1.0, 2.0], "z2": [1, 2, 3, 4]})
    batch = RecordBatch.from_records(frame, cell_column="cell", n_cells=3)
    assert batch.columns == ("z1", "z2") and batch.n_cells == 3
    np.testing.assert_array_equal(batch.cell_counts(), [[1, 1, 2]])
    back = batch.to_records((0,))
    pd.testing.assert_frame_equal(back, frame.astype({"z1": float, "z2": float}))
    assert RecordBatch.from_records(np.arange(5.0)).values.shape == (1, 5, 1)


def test_bad_records_are_rejected():
    with pytest.raises(ValueError, match="missing or infinite"):
        RecordBatch.from_records(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="cell labels"):
        RecordBatch.from_records(pd.DataFrame({"c": [0, 3], "x": [1.0, 2.0]}), cell_column="c",
                                 n_cells=2)
    with pytest.raises(ValueError, match="cells have shape"):
        RecordBatch(np.zeros((2, 5, 1)), np.zeros((2, 4), dtype=int), 2)
