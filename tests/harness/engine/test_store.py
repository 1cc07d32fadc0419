"""The result store: atomic writes, readable permissions, stale temporaries, and the integrity of
task files (a task is done only when its files are complete and are this task's)."""

import os
import stat

import pandas as pd
import pyarrow.parquet as pq
import pytest

from harness.engine import store as store_mod
from harness.engine.grid import Task
from harness.engine.store import DamagedResults, SweepStore, atomic_write_parquet


def _task(block=0, method="LAP"):
    return Task("s", (("n", 40),), block, 10, 10, method, "fp")


def _frames(n=10):
    rows = pd.DataFrame({"replicate": range(n), "estimate": [0.5 + i for i in range(n)]})
    diag = pd.DataFrame({"replicate": range(n), "diagnostic": "bins", "value": 3.0})
    return rows, diag, diag.rename(columns={"diagnostic": "metric"})


def test_atomic_write_leaves_no_temporary_and_honours_umask(tmp_path):
    path = tmp_path / "a" / "x.parquet"
    old = os.umask(0o022)
    try:
        atomic_write_parquet(pd.DataFrame({"v": [1, 2]}), path)
    finally:
        os.umask(old)
    assert pd.read_parquet(path)["v"].tolist() == [1, 2]
    assert [p.name for p in path.parent.iterdir()] == ["x.parquet"]
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode & stat.S_IRGRP and mode & stat.S_IROTH  # not mkstemp's private 0600


def test_failed_write_removes_its_temporary(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(store_mod.pq, "write_table", boom)
    with pytest.raises(RuntimeError):
        atomic_write_parquet(pd.DataFrame({"v": [1]}), tmp_path / "y.parquet")
    assert list(tmp_path.iterdir()) == []


def test_stale_temporaries_are_removed_from_every_table(tmp_path):
    store = SweepStore(tmp_path)
    for folder in (store.tasks_dir, store.diagnostics_dir, store.metrics_dir):
        folder.mkdir(parents=True)
        (folder / ".tmp-abc.parquet").write_bytes(b"half")
    (store.tasks_dir / "done.parquet").write_bytes(b"keep")
    assert store.remove_stale_temporaries() == 3
    assert [p.name for p in store.tasks_dir.iterdir()] == ["done.parquet"]


def test_a_written_task_is_done_and_reads_back(tmp_path):
    store, task = SweepStore(tmp_path), _task()
    assert not store.state(task).done and not store.state(task).damaged
    rows, diag, metrics = _frames()
    store.write_task(task, rows, diag, metrics)
    assert store.state(task).done
    pd.testing.assert_frame_equal(store.read_tasks([task]), rows)
    pd.testing.assert_frame_equal(store.read_diagnostics([task]), diag)
    pd.testing.assert_frame_equal(store.read_metrics([task]), metrics)
    stamp = pq.read_schema(store.task_path(task)).metadata[store_mod.STAMP_KEY]
    assert task.key.encode() in stamp


def _truncate(path, size=100):
    data = path.read_bytes()
    path.write_bytes(data[:size])


def _flip_byte_in_data_pages(path):
    data = bytearray(path.read_bytes())
    data[len(b"PAR1") + 20] ^= 0xFF  # inside the first data page, far from the footer
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda s, t, o: _truncate(s.task_path(t)), "unreadable footer"),
        (lambda s, t, o: _truncate(s.diagnostics_path(t)), "unreadable footer"),
        (lambda s, t, o: s.metrics_path(t).unlink(), "the replicate_metrics file is missing"),
        (lambda s, t, o: os.replace(s.task_path(o), s.task_path(t)), "holds task"),
        (lambda s, t, o: atomic_write_parquet(pd.read_parquet(s.task_path(t)), s.task_path(t)),
         "no task stamp"),
    ],
    ids=["truncated rows", "truncated diagnostics", "missing metrics", "another task's file",
         "unstamped"],
)
def test_damaged_task_files_are_not_done(tmp_path, damage, reason):
    store, task, other = SweepStore(tmp_path), _task(), _task(block=1)
    for t in (task, other):
        store.write_task(t, *_frames())
    damage(store, task, other)
    state = store.state(task)
    assert not state.done and reason in state.problem


def test_damage_inside_the_data_pages_is_caught_on_read_and_moved_aside(tmp_path):
    store, task = SweepStore(tmp_path), _task()
    store.write_task(task, *_frames(2000))
    _flip_byte_in_data_pages(store.task_path(task))
    assert store.state(task).done  # the footer is intact: only reading the pages can tell
    with pytest.raises(DamagedResults, match="unreadable") as err:
        store.read_tasks([task])
    assert "\n" not in str(err.value) and task.key in str(err.value)
    assert not store.task_path(task).exists()
    moved = [p.relative_to(store.damaged_dir) for p in store.damaged_dir.rglob("*.parquet")]
    assert sorted(str(p.parent.name) for p in moved) == ["diagnostics", "replicate_metrics",
                                                         "rows"]


def test_digest_changes_when_a_task_file_is_rewritten(tmp_path):
    store, task = SweepStore(tmp_path), _task()
    store.write_task(task, *_frames())
    before = store.digest_inputs([task])
    assert before == store.digest_inputs([task])
    store.write_task(task, *_frames())
    assert store.digest_inputs([task]) != before


def test_tasks_whose_column_types_differ_read_together(tmp_path):
    """An all-null column in one task, ints in one and floats in another: unified as
    pandas.concat would unify them."""
    store = SweepStore(tmp_path)
    a, b = _task(block=0), _task(block=1)
    store.write_task(a, pd.DataFrame({"x": [1, 2], "note": [None, None]}), pd.DataFrame())
    store.write_task(b, pd.DataFrame({"x": [1.5, 2.5], "note": ["s", "t"]}), pd.DataFrame())
    both = store.read_tasks([a, b])
    assert both["x"].tolist() == [1.0, 2.0, 1.5, 2.5]
    assert both["note"].tolist()[2:] == ["s", "t"] and both["note"].isna().sum() == 2
