"""collapse_batch: each data set's identical integer records merged into distinct rows with
counts (the fast path of the R2 logistic fits), or None where collapsing is impossible or does
not pay."""

import numpy as np

from harness.inference.design import collapse_batch


def test_rows_and_counts_are_each_data_sets_records():
    rng = np.random.default_rng(0)
    x = np.stack([rng.integers(17, 90, (3, 500)), rng.integers(-2, 2, (3, 500))], -1)
    y = rng.integers(0, 2, (3, 500, 1))
    x[2, :, 0] = 40  # fewer distinct rows in data set 2: padded with count 0
    rows, counts = collapse_batch(x, y, max_share=1.0)
    assert rows.shape[0] == 3 and rows.shape[2] == 3 and counts.shape == rows.shape[:2]
    for b in range(3):
        records = np.c_[x[b], y[b]].astype(float)
        want, want_counts = np.unique(records, axis=0, return_counts=True)
        used = counts[b] > 0
        # the rows in the order of np.unique (first column most significant), then padding
        np.testing.assert_array_equal(rows[b, used], want)
        np.testing.assert_array_equal(counts[b, used], want_counts)
        assert used[:used.sum()].all() and not rows[b, ~used].any()
    assert (counts[2] == 0).any()


def test_none_for_fractions_for_keys_beyond_2_53_and_when_records_do_not_repeat():
    rng = np.random.default_rng(1)
    ints = rng.integers(0, 3, (2, 400, 2)).astype(float)
    assert collapse_batch(ints) is not None
    half = ints.copy()
    half[1, 399, 0] = 0.5  # one fraction, past the first look at a few records
    assert collapse_batch(half) is None
    wide = np.c_[ints[0], np.arange(400.0) * 2.0**40][None]  # 3·3·(399·2^40 + 1) cells
    assert collapse_batch(wide, max_share=1.0) is not None
    assert collapse_batch(np.concatenate([wide] * 4), max_share=1.0) is None  # 4× > 2^53
    distinct = np.arange(800.0).reshape(2, 400, 1)
    assert collapse_batch(distinct) is None  # every record distinct: 100 % > 50 %
    assert collapse_batch(distinct, max_share=1.0)[1].max() == 1
