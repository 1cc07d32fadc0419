"""Aggregation while the sweep runs (harness/engine/aggregate.py, MetricsStream): the metrics are
identical, bit for bit, to aggregating every row after the sweep, whether the sweep ran fresh,
resumed, or the tasks were stored in another order; and the pairs were really aggregated during
the sweep, not all at the end."""

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from harness import config
from harness.engine.aggregate import MetricsStream, _tasks, aggregate, read_rows
from harness.engine.store import DamagedResults, SweepStore
from harness.engine.sweep import run_sweep, sweep_dir

G = ["study=bowen_liu_sim1", "profile=ci", "study.grid.n=[40,100]", "study.grid.pi=[0.1]",
     "study.replicates.ci=150", "block_size=50", "study.log_epsilon=[-1,1]",
     "executor.n_jobs=2"]
N_PAIRS = 2 * 6  # scenarios x methods, 3 blocks each


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("stream")
    cfg = config.load([*G, f"out_dir={out}"])
    stream = MetricsStream(cfg)
    assert run_sweep(cfg, progress=False, listener=stream).ran == 3 * N_PAIRS
    return cfg, stream, aggregate(cfg, rows=read_rows(cfg))


def test_every_pair_is_aggregated_during_the_sweep_with_identical_numbers(swept):
    cfg, stream, at_once = swept
    assert len(stream._metrics) == N_PAIRS
    assert_frame_equal(aggregate(cfg, stream=stream), at_once, check_exact=True)


def test_tasks_stored_in_any_order_give_the_same_metrics(swept):
    cfg, _, at_once = swept
    stream = MetricsStream(cfg)
    for task in reversed(_tasks(cfg)):
        stream.stored(task.key)
    assert len(stream._metrics) == N_PAIRS
    assert_frame_equal(aggregate(cfg, stream=stream), at_once, check_exact=True)


def test_a_resumed_sweep_streams_the_pairs_of_earlier_tasks_too(swept):
    cfg, _, at_once = swept
    store = SweepStore(sweep_dir(cfg))
    lost = _tasks(cfg)[::7]
    for task in lost:
        store.task_path(task).unlink()
    stream = MetricsStream(cfg)
    assert run_sweep(cfg, progress=False, listener=stream).ran == len(lost)
    assert len(stream._metrics) == N_PAIRS
    assert_frame_equal(aggregate(cfg, stream=stream), at_once, check_exact=True)


def test_pairs_left_unstreamed_are_read_at_the_end(swept):
    cfg, _, at_once = swept
    stream = MetricsStream(cfg)
    tasks = _tasks(cfg)
    for task in tasks[: len(tasks) // 2]:
        stream.stored(task.key)
    assert 0 < len(stream._metrics) < N_PAIRS
    metrics = aggregate(cfg, stream=stream)
    assert_frame_equal(metrics, at_once, check_exact=True)
    assert_frame_equal(pd.read_parquet(sweep_dir(cfg) / "metrics.parquet"), at_once,
                       check_exact=True)


def test_a_damaged_file_met_while_streaming_is_reported_at_the_end(tmp_path):
    cfg = config.load([*G, "study.grid.n=[40]", "executor.n_jobs=1", f"out_dir={tmp_path}"])
    run_sweep(cfg, progress=False)
    task = _tasks(cfg)[0]
    path = SweepStore(sweep_dir(cfg)).task_path(task)
    data = bytearray(path.read_bytes())
    data[30] ^= 0xFF  # inside a data page: only reading finds it
    path.write_bytes(bytes(data))
    stream = MetricsStream(cfg)
    for t in _tasks(cfg):
        stream.stored(t.key)
    assert not path.exists()  # moved aside when met
    with pytest.raises(DamagedResults, match="moved to"):
        aggregate(cfg, stream=stream)
