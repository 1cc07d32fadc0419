"""Released sets of different sizes within one release (DESIGN §3; issue "one contract", item 3):
a RecordBatch carries each set's size and pads the rest of its record axis loudly (values NaN,
weights 0, labels −1); sizes follow the sets through nested m and record views; a size-aware
analysis gets each set's own n, and one that ignores the sizes gets NaN (unusable), never a
plausible wrong number. CountBatch takes a per-set n."""

import numpy as np
import pytest

from harness.data import CountBatch, RecordBatch, group_sums
from harness.engine.grid import Task
from harness.engine.study import Study
from harness.engine.task import run_task
from harness.evaluation import IntervalEvaluation
from harness.inference.estimators import cell_proportions, sample_mean
from harness.synthesizers import SetwiseSynthesizer


def _part(rng, r, n, weights=True):
    return RecordBatch(rng.normal(size=(r, n, 2)), rng.integers(0, 3, (r, n)), 3, ("a", "b"),
                       rng.uniform(1, 2, (r, n)) if weights else None, rng.integers(0, 2, (r, n)))


@pytest.fixture
def ragged():
    rng = np.random.default_rng(7)
    parts = [_part(rng, 4, n) for n in (5, 9, 7)]
    return parts, RecordBatch.stack_sets(parts)


def test_stacking_sets_of_different_sizes_pads_them_loudly(ragged):
    parts, batch = ragged
    assert batch.values.shape == (4, 3, 9, 2) and batch.n == 9
    assert batch.set_sizes.tolist() == [[5, 9, 7]] * 4
    for j, part in enumerate(parts):
        n = part.n
        np.testing.assert_array_equal(batch.values[:, j, :n], part.values)
        assert np.isnan(batch.values[:, j, n:]).all()
        assert (batch.weights[:, j, n:] == 0).all() and (batch.cells[:, j, n:] == -1).all()
        assert (batch.strata[:, j, n:] == -1).all()
        np.testing.assert_array_equal(batch.valid[:, j], np.broadcast_to(np.arange(9) < n, (4, 9)))


def test_sizes_follow_nested_m_and_record_views(ragged):
    parts, batch = ragged
    first = batch.first_sets(2)
    assert first.set_sizes.tolist() == [[5, 9]] * 4
    for j, part in enumerate(parts):
        frame = batch.to_records((1, j))
        assert len(frame) == part.n
        np.testing.assert_array_equal(frame[["a", "b"]].to_numpy(), part.values[1])
        np.testing.assert_array_equal(frame["cell"].to_numpy(), part.cells[1])
    counts = batch.cell_counts()
    for j, part in enumerate(parts):
        np.testing.assert_array_equal(counts[:, j], part.cell_counts())
    assert RecordBatch.stack_sets(parts[:1]).sizes is None  # one size: no padding


def test_bad_padding_and_sizes_are_refused(ragged):
    _, batch = ragged
    values = batch.values.copy()
    values[0, 0, 6] = 1.0  # a plausible number where set 0 has no record
    with pytest.raises(ValueError, match="padding records"):
        RecordBatch(values, sizes=batch.sizes)
    with pytest.raises(ValueError, match="sizes must lie in 0..9"):
        RecordBatch(batch.values, sizes=np.full((4, 3), 10))
    with pytest.raises(ValueError, match="batch shape"):
        RecordBatch(batch.values, sizes=np.full(4, 5))
    with pytest.raises(ValueError, match="padding records must have weights 0"):
        RecordBatch(batch.values, weights=np.ones((4, 3, 9)), sizes=batch.sizes)


def test_labels_of_padding_cannot_be_summed_by_accident(ragged):
    _, batch = ragged
    with pytest.raises(ValueError, match="mask them with RecordBatch.valid"):
        group_sums(batch.weights, batch.strata, 2)


def test_a_size_aware_mean_uses_each_sets_own_n_and_a_naive_one_gets_nan(ragged):
    parts, batch = ragged
    est, var = sample_mean(batch.values[..., 0], batch.valid)
    for j, part in enumerate(parts):
        x = part.values[..., 0]
        np.testing.assert_allclose(est[:, j], x.mean(axis=1), rtol=1e-13)
        np.testing.assert_allclose(var[:, j], x.var(axis=1, ddof=1) / part.n, rtol=1e-12)
    naive, _ = sample_mean(batch.values[..., 0])
    assert np.isnan(naive[:, [0, 2]]).all() and np.isfinite(naive[:, 1]).all()


def test_count_batches_take_a_size_per_set():
    counts = np.array([[[3, 2], [10, 0], [1, 1]]])
    batch = CountBatch(counts, counts.sum(axis=-1))
    assert batch.first_sets(2).n.tolist() == [[5, 10]]
    p, _ = cell_proportions(batch.counts, batch.n)
    np.testing.assert_allclose(p[0, :, 0], [0.6, 1.0, 0.5])
    with pytest.raises(ValueError, match="n has shape"):
        CountBatch(counts, np.array([5, 10, 2]))


class RandomSizeBootstrap(SetwiseSynthesizer):
    """Each set: Poisson(n) records (at least 2) drawn with replacement from the original."""

    name = "test_random_size_bootstrap"
    private = False
    input_kind = "numeric"

    def _one_set(self, data, eps_set, ledger, rng, j):
        sizes = np.maximum(rng.poisson(data.n, size=data.n_replicates), 2)
        idx = rng.integers(0, data.n, size=(data.n_replicates, int(sizes.max())))
        values = np.take_along_axis(data.values, idx[..., None], axis=1)
        valid = np.arange(idx.shape[1]) < sizes[:, None]
        return RecordBatch(np.where(valid[..., None], values, np.nan), sizes=sizes), {}


class Means(Study):
    grid_rules = {"n": {"integer": True, "minimum": 2}}

    def generate(self, scenario, rng, n_replicates):
        return RecordBatch(rng.normal(1.0, 2.0, (n_replicates, scenario["n"], 1)))

    def method(self, label, scenario):
        return RandomSizeBootstrap(m=3)

    def evaluations(self):
        def mean(aware):
            def analyse(original, release, scenario):
                sets = release.sets
                est, var = sample_mean(sets.values[..., 0], sets.valid if aware else None)
                return est[..., None], var[..., None]
            return analyse

        truth = lambda scenario: {"mean": 1.0}  # noqa: E731
        return [IntervalEvaluation("aware", truth, mean(True), "partial"),
                IntervalEvaluation("naive", truth, mean(False), "partial")]


def test_a_release_of_sets_of_different_sizes_runs_through_the_engine():
    study = Means({"name": "sizes", "grid": {"n": [40]}, "roster": {"BOOT": {}},
                   "replicates": {"ci": 400}})
    task = Task("sizes", (("n", 40),), 0, 400, 400, "BOOT", "test")
    rows = run_task(study, task, {"seed": 3}).rows
    aware = rows[rows["estimand"] == "mean"].iloc[: len(rows) // 2]
    release = study.method("BOOT", {"n": 40}).release(
        study.generate({"n": 40}, np.random.default_rng(0), 5), None, np.random.default_rng(1))
    assert release.sets.sizes is not None and len(np.unique(release.sets.set_sizes)) > 1
    assert aware["usable"].all()
    # the bootstrap mean of the original is unbiased for μ = 1: |bias| within 4 Monte Carlo SEs
    err = aware["estimate"] - 1.0
    assert abs(err.mean()) < 4 * err.std() / np.sqrt(len(err))
    # ignoring the sizes gives each padded set NaN, which the combining rules drop like a
    # failed set: a replicate is usable only through sets that happen to have no padding
    out = study.evaluations()[1].output(None, release, {"n": 40})
    np.testing.assert_array_equal(np.isnan(out.estimate[..., 0]),
                                  release.sets.set_sizes < release.sets.n)
    naive = rows.iloc[len(rows) // 2:]
    assert naive["estimate"].isna().mean() > 0.95
    np.testing.assert_array_equal(naive["usable"], naive["estimate"].notna())
