"""``harness bench`` on a tiny configuration: one row per method with positive finite vectorised
and loop throughputs, a speed-up, the sweep wall time, and bench.csv in the sweep directory."""

import numpy as np
import pandas as pd

from harness import config
from harness.engine.bench import run_bench
from harness.engine.sweep import sweep_dir

TINY = [
    "profile=ci", "study.grid.n=[40]", "study.grid.pi=[0.5]", "study.log_epsilon=[0]",
    "study.replicates.ci=200", "block_size=100", "executor.n_jobs=1",
]


def test_bench_reports_every_method(tmp_path, capsys):
    cfg = config.load([*TINY, f"out_dir={tmp_path}"])
    from harness.outputs import report_sweep

    table = run_bench(cfg, loop_seconds=0.05, report=report_sweep)
    printed = capsys.readouterr().out

    assert list(table["method"]) == cfg["methods"]
    for col in ("vec_reps_per_s", "loop_reps_per_s", "speedup", "sweep_seconds",
                "sweep_reps_per_s", "report_seconds"):
        values = table[col].to_numpy(dtype=float)
        assert np.all(np.isfinite(values) & (values > 0)), (col, values)
    assert np.allclose(table["speedup"], table["vec_reps_per_s"] / table["loop_reps_per_s"])
    # one block of block_size replicates for the single scenario
    assert (table["vec_replicates"] == 100).all()
    assert (table["loop_replicates"] >= 1).all()
    # the sweep covered scenarios x replicates x methods and ran in a fresh directory
    assert (table["sweep_replicates"] == 200 * len(cfg["methods"])).all()
    assert (table["cores"] == 1).all()
    assert not (sweep_dir(cfg) / "manifest.json").exists()
    # the whole command is measured too: sweep plus report, as a ratio to the sweep
    assert (table["command_over_sweep"] > 1).all()
    assert "whole command:" in printed and "x the sweep" in printed

    out = sweep_dir(cfg) / "bench.csv"
    assert out.exists()
    saved = pd.read_csv(out)
    assert list(saved["method"]) == cfg["methods"]
    assert "speedup" in saved.columns

    assert "study=bowen_liu_sim1 profile=ci" in printed and "full sweep:" in printed
    assert "speed-up" in printed
    for label in cfg["methods"]:
        assert label in printed


def test_bench_without_loop_oracle_leaves_loop_columns_nan(tmp_path, monkeypatch):
    from experiments.bowen_liu.sim1.study import Simulation1

    monkeypatch.setattr(Simulation1, "loop_oracle", lambda self: None)
    cfg = config.load([*TINY, "methods=[LAP]", f"out_dir={tmp_path}"])
    table = run_bench(cfg, sweep=False)
    assert len(table) == 1
    assert np.isnan(table["loop_reps_per_s"]).all() and np.isnan(table["speedup"]).all()
    assert (table["vec_reps_per_s"] > 0).all()
    assert (sweep_dir(cfg) / "bench.csv").exists()


def test_bench_keep_leaves_the_timed_sweep_for_run_and_refuses_a_done_one(tmp_path, capsys):
    """--keep: the timed sweep is the sweep dir's (a later run finds every task done), and a
    second --keep is refused in one line before anything runs."""
    import pytest

    from harness import cli
    from harness.errors import ConfigError

    args = [*TINY, "methods=[LAP]", f"out_dir={tmp_path}"]
    assert cli.main(["bench", "--keep", *args]) == 0
    cfg = config.load(args)
    assert (sweep_dir(cfg) / "manifest.json").exists() and (sweep_dir(cfg) / "bench.csv").exists()
    capsys.readouterr()
    assert cli.main(["run", *args]) == 0
    assert " already done, 0 run, 0 failed" in capsys.readouterr().out
    before = (sweep_dir(cfg) / "bench.csv").read_bytes()
    with pytest.raises(ConfigError, match=r"bench --keep: .* already holds (\d+) of the \1 tasks"):
        from harness.engine.bench import run_bench as bench
        bench(cfg, keep=True)
    assert (sweep_dir(cfg) / "bench.csv").read_bytes() == before
    assert cli.main(["bench", "--fast", *args]) == 2
    assert "--fast" in capsys.readouterr().err


def test_bench_sweep_only_times_the_sweep_and_nothing_else(tmp_path, monkeypatch, capsys):
    """--sweep-only: the per-method timing never runs (its columns are NaN), the sweep does."""
    import harness.engine.bench as bench_mod
    from harness import cli

    def refuse(*args, **kwargs):
        raise AssertionError("the per-method timing ran under --sweep-only")

    monkeypatch.setattr(bench_mod, "time_vectorised", refuse)
    monkeypatch.setattr(bench_mod, "time_loop", refuse)
    args = [*TINY, "methods=[LAP]", f"out_dir={tmp_path}"]
    assert cli.main(["bench", "--sweep-only", *args]) == 0
    assert "full sweep:" in capsys.readouterr().out
    saved = pd.read_csv(sweep_dir(config.load(args)) / "bench.csv")
    assert list(saved["method"]) == ["LAP"]
    assert saved[["vec_seconds", "loop_seconds", "speedup"]].isna().all().all()
    assert (saved["sweep_seconds"] > 0).all() and (saved["report_seconds"] > 0).all()
