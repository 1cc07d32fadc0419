"""The result store: atomic writes, readable permissions, stale temporaries."""

import os
import stat

import pandas as pd

from harness.engine.store import SweepStore, atomic_write_parquet


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


def test_failed_write_removes_its_temporary(tmp_path):
    class Boom(pd.DataFrame):
        def to_parquet(self, *a, **k):
            raise RuntimeError("disk full")

    try:
        atomic_write_parquet(Boom({"v": [1]}), tmp_path / "y.parquet")
    except RuntimeError:
        pass
    assert list(tmp_path.iterdir()) == []


def test_stale_temporaries_are_removed(tmp_path):
    store = SweepStore(tmp_path)
    store.tasks_dir.mkdir(parents=True)
    (store.tasks_dir / ".tmp-abc.parquet").write_bytes(b"half")
    (store.tasks_dir / "done.parquet").write_bytes(b"keep")
    assert store.remove_stale_temporaries() == 1
    assert [p.name for p in store.tasks_dir.iterdir()] == ["done.parquet"]
