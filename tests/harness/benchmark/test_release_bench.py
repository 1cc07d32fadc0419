"""``harness bench --release=<methods>`` (harness/benchmark/release_bench.py): one row per method
with the first, steady-state, loop and batched seconds of its releases on a study's workload;
rows accumulate over studies and a re-bench replaces its own; bad options are one line; the
committed benchmark report shows the table when it is collected."""

import numpy as np
import pandas as pd
import pytest

from harness import config
from harness.benchmark.release_bench import COLUMNS, bench_release, write_release_bench
from harness.benchmark.report import render
from harness.cli import main


def test_one_row_per_method_with_consistent_times(tmp_path):
    cfg = config.load(["study=bowen_liu_sim1", "profile=ci", f"out_dir={tmp_path}"])
    table = bench_release(cfg, ["privbayes"], replicates=3)  # MST: the same path, 30 s of JAX
    assert list(table.columns) == list(COLUMNS)
    assert list(table["method"]) == ["privbayes"]
    assert (table["replicates"] == 3).all() and (table["study"] == "bowen_liu_sim1").all()
    times = table[["first_s", "steady_s", "loop_task_s", "batched_first_s", "batched_task_s"]]
    assert (times.to_numpy() > 0).all()
    assert np.allclose(table["loop_task_s"], 3 * table["steady_s"])
    assert np.allclose(table["loop_over_batched"], table["loop_task_s"] / table["batched_task_s"])
    # the middle of Simulation 1's privacy grid (ln ε from -4 to 4 at profile=ci: ε = 1)
    assert table["privacy"].iloc[0] == pytest.approx(1.0)


def test_rows_accumulate_over_studies_and_a_rebench_replaces_its_own(tmp_path):
    def row(study, method, first):
        return pd.DataFrame([{**dict.fromkeys(COLUMNS, 1.0), "study": study, "method": method,
                              "scenario": "n=1", "first_s": first}])

    write_release_bench(row("b", "MST", 1.0), tmp_path)
    write_release_bench(row("a", "MST", 2.0), tmp_path)
    path = write_release_bench(row("b", "MST", 3.0), tmp_path)
    table = pd.read_csv(path)
    assert list(zip(table["study"], table["first_s"], strict=True)) == [("a", 2.0), ("b", 3.0)]


@pytest.mark.parametrize("argv, key", [
    (["--release=privbayes", "--replicates=x"], "--replicates: must be an integer >= 1"),
    (["--replicates=3"], "--replicates needs --release=<methods>"),
    (["--release=nope"], "nope"),
    (["--bogus"], "bench: option: '--bogus' is not allowed"),
])
def test_bad_options_are_one_line(argv, key, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["bench", "profile=ci", *argv, f"out_dir={out}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and key in err[0], err
    assert not out.exists()


def test_a_study_without_a_data_interface_is_one_line(tmp_path):
    from harness.errors import ConfigError

    cfg = config.load(["study=bowen_liu_sim1", "profile=ci", f"out_dir={tmp_path}"])
    cfg["study"] = {k: v for k, v in cfg["study"].items() if k != "benchmark"}
    with pytest.raises(ConfigError, match="declares no benchmark data interface"):
        bench_release(cfg, ["privbayes"], replicates=3)


def test_the_benchmark_report_shows_the_release_costs():
    bench = pd.DataFrame([{"method": "MST", "study": "s", "scenario": "n=1", "privacy": 1.0,
                           "replicates": 100, "first_s": 17.04, "steady_s": 0.0951,
                           "loop_task_s": 9.51, "batched_first_s": 12.0, "batched_task_s": 7.56,
                           "loop_over_batched": 1.258}])
    empty = pd.DataFrame(columns=["study", "method", "relation", "metric"])
    text = render(empty, pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(),
                  pd.DataFrame(), title="t", figures=[], release_bench=bench)
    assert "## Cost per release" in text
    assert "| s | MST | 100 | 17 | 0.0951 | 9.51 | 12 | 7.56 | 1.26 |" in text
    assert "## Cost per release" not in render(
        empty, pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(),
        title="t", figures=[])
