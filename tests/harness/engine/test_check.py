"""``harness check``: regression checks of the aggregated metrics against a snapshot.

Exact mode passes on an identical rerun and lists every difference otherwise; statistical mode
passes a reseeded (correct) run and flags a planted bug (the LAP noise scale halved); ``--update``
writes the snapshot and prints what changed; a missing snapshot is a one-line error. Snapshots
are written into a temporary ``--reference-dir``, never into results/reference/.
"""

import contextlib
import io
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from scipy.stats import norm

import harness.synthesizers.laplace_sanitizer as laplace_sanitizer
from harness import cli
from harness.engine import check
from harness.metrics import METRICS

REPO = Path(__file__).resolve().parents[3]
# 8 scenarios x 6 methods x 300 replicates, 5 values of ln ε: 48 tasks, about a second.
SMALL = [
    "study=bowen_liu_sim1",
    "profile=ci",
    "study.replicates.ci=300",
    "block_size=300",
    "study.grid.n=[40,100]",
    "study.log_epsilon=[-4,-2,0,2,4]",
    "executor.n_jobs=1",  # in-process, so that monkeypatched code runs
]


def _main(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _check(out: Path, ref: Path, *extra: str) -> tuple[int, str, str]:
    return _main(["check", *SMALL, f"out_dir={out}", f"--reference-dir={ref}", *extra])


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A snapshot of the small sweep at the default seed, written by ``check --update``."""
    ref = tmp_path_factory.mktemp("reference")
    status, stdout, stderr = _check(tmp_path_factory.mktemp("out"), ref, "--update")
    assert status == 0, stderr
    assert "snapshot written" in stdout and "no previous snapshot" in stdout
    return ref


def _listed_rows(stdout: str, method: str) -> list[str]:
    return [line for line in stdout.splitlines() if re.match(rf"\s*{re.escape(method)}\s", line)]


# --- the threshold and its edge cases (no sweep) ------------------------------------------------


def test_threshold_controls_the_familywise_false_alarm_rate():
    assert check.threshold(1) == 4.0 and check.threshold(0) == 4.0
    t = check.threshold(3192, 0.01)
    assert 4.64 < t < 4.68  # the profile=ci snapshot of Sim 1 compares 3192 cells
    assert 1 - (1 - 2 * norm.sf(t)) ** 3192 == pytest.approx(0.01, rel=1e-6)
    # a fixed |z| > 4 would raise a false alarm in about 18% of clean runs over 3192 cells
    assert 1 - (1 - 2 * norm.sf(4.0)) ** 3192 > 0.18
    assert check.threshold(100_000) > check.threshold(10_000) > t


def _frame(metric, value, mcse, n_rep=1000, **keys):
    return pd.DataFrame([{"scenario": keys.get("scenario", "n=40,pi=0.1"),
                          "method": keys.get("method", "LAP"), "epsilon": 1.0,
                          "estimand": "pi", "metric": metric, "value": value, "mcse": mcse,
                          "n_rep": n_rep}])


@pytest.mark.parametrize(
    "metric, old, new, flagged",
    [
        ("coverage", (1.0, 0.0), (1.0, 0.0), False),  # both exactly 1: z = 0
        ("coverage", (1.0, 0.0), (0.999, math.sqrt(0.999 * 0.001 / 1000)), False),
        ("coverage", (1.0, 0.0), (0.95, math.sqrt(0.95 * 0.05 / 1000)), True),
        ("coverage", (1.0, 0.0), (0.0, 0.0), True),  # both MCSE 0, values differ: floored SE
        ("usable_prop", (1.0, 0.0), (0.998, math.sqrt(0.998 * 0.002 / 1000)), False),
        ("usable_prop", (1.0, 0.0), (0.99, math.sqrt(0.99 * 0.01 / 1000)), False),
        ("usable_prop", (1.0, 0.0), (0.98, math.sqrt(0.98 * 0.02 / 1000)), True),
        ("bias", (0.25, 0.0), (0.25 + 1e-15, 0.0), False),  # deterministic, float noise
        ("bias", (0.25, 0.0), (0.251, 0.0), True),  # deterministic metric moved: z = inf
        ("bias", (0.01, 0.002), (0.015, 0.002), False),  # z = 1.8
        ("bias", (0.01, 0.002), (0.03, 0.002), True),  # z = 7.1
        ("bias", (0.01, 0.002), (math.nan, math.nan), True),  # defined on one side only
        ("bias", (math.nan, math.nan), (math.nan, math.nan), False),
        ("mse", (0.01, 0.001), (0.05, 0.001), False),  # not judged: rmse is
        ("emp_se", (0.01, 0.001), (0.05, 0.001), True),
        ("rel_error_model_se", (1.0, 0.1), (5.0, 0.1), False),  # model_se and emp_se are
        ("new_metric", (0.01, 0.001), (0.05, 0.001), True),  # unknown metrics are judged
    ],
)
def test_statistical_edge_cases(metric, old, new, flagged):
    result = check.compare(_frame(metric, *old), _frame(metric, *new))
    assert result.passed is not flagged, result.format()


def test_cells_with_few_replicates_are_counted_not_judged():
    result = check.compare(_frame("bias", 0.01, 0.002, n_rep=20), _frame("bias", 0.5, 0.002))
    assert result.passed and result.n_unjudged == 1 and result.n_compared == 0
    assert "1 not judged (fewer than 30 replicates or MCSE unknown)" in result.summary()


def test_proportion_se_floor_is_binomial():
    se = check.proportion_se([1.0, 0.0, 0.5], [0.0, 0.0, math.sqrt(0.25 / 1000)], [1000] * 3)
    p = 0.5 / 1001
    assert se[0] == pytest.approx(math.sqrt(p * (1 - p) / 1000))
    assert se[1] == pytest.approx(se[0])
    assert se[2] == pytest.approx(math.sqrt(0.25 / 1000))


def test_cells_on_one_side_only_are_listed():
    old = pd.concat([_frame("bias", 0.01, 0.002), _frame("bias", 0.01, 0.002, method="MD")])
    new = pd.concat([_frame("bias", 0.01, 0.002), _frame("bias", 0.01, 0.002, method="MS")])
    for mode in check.MODES:
        result = check.compare(old, new, mode)
        assert not result.passed and (result.only_old, result.only_new) == (1, 1)
        assert set(result.listed["field"]) == {"only in snapshot", "only in this run"}


# --- the command on small sweeps ----------------------------------------------------------------


def test_missing_snapshot_is_a_one_line_error(tmp_path):
    out = tmp_path / "out"
    status, stdout, stderr = _check(out, tmp_path / "nowhere")
    assert status == 2 and stdout == ""
    assert len(stderr.splitlines()) == 1 and stderr.startswith("error: check: no snapshot")
    assert "harness check --update study=bowen_liu_sim1 profile=ci" in stderr
    assert not out.exists()


def test_missing_snapshot_through_the_console_entry_point(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "harness.cli", "check", "--mode", "exact", *SMALL,
         f"out_dir={tmp_path / 'out'}", f"--reference-dir={tmp_path}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert res.returncode == 2 and res.stdout == "", res.stderr
    assert res.stderr.count("\n") == 1 and "harness check --update" in res.stderr


def test_unreadable_snapshot_is_a_one_line_error(tmp_path):
    bad = tmp_path / "ref" / "bowen_liu_sim1" / "ci.parquet"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not parquet")
    status, stdout, stderr = _check(tmp_path / "out", tmp_path / "ref")
    assert status == 2 and len(stderr.splitlines()) == 1, stderr
    assert "cannot read snapshot" in stderr and "--update" in stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args, words",
    [
        (["--mode", "fuzzy"], ["--mode", "'fuzzy'", "allowed: statistical, exact"]),
        (["--mode=fuzzy"], ["--mode", "allowed: statistical, exact"]),
        (["--mode"], ["--mode", "needs a value"]),
        (["--strict"], ["'--strict'", "--mode", "--update", "--reference-dir"]),
        (["--alpha=2"], ["--alpha", "(0, 1)"]),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, args, words):
    status, stdout, stderr = _check(tmp_path / "out", tmp_path, *args)
    assert status == 2 and len(stderr.splitlines()) == 1, stderr
    for word in words:
        assert word in stderr
    assert not (tmp_path / "out").exists()


def test_snapshot_is_small_and_holds_only_what_it_needs(reference):
    path = reference / "bowen_liu_sim1" / "ci.parquet"
    meta = pq.ParquetFile(path).metadata
    assert meta.schema.names == [*check.KEY_COLUMNS, *check.OPTIONAL_KEYS, *check.VALUE_COLUMNS]
    assert meta.row_group(0).column(0).compression == "ZSTD"
    # scenarios x (2 baselines + 4 DP methods x 5 ε) x metrics
    assert meta.num_rows == 8 * (2 + 4 * 5) * len(METRICS)
    assert path.stat().st_size < 40_000
    _, info = check.read_snapshot(path)
    assert info["seed"] == 20200501 and info["n_replicates"] == 300


def test_identical_rerun_passes_both_modes(reference, tmp_path):
    out = tmp_path / "rerun"  # a fresh sweep: every number is computed again
    status, stdout, stderr = _check(out, reference, "--mode", "exact")
    assert status == 0, stdout + stderr
    assert "check exact: PASS" in stdout and ", 0 differ," in stdout
    status, stdout, _ = _check(out, reference)  # statistical is the default; resumes the sweep
    assert status == 0 and "check statistical: PASS" in stdout and "0 flagged" in stdout
    assert (out / "bowen_liu_sim1" / "ci" / "check.csv").exists()


@pytest.fixture
def halved_lap_noise(monkeypatch):
    """A planted bug: LAP's Laplace noise scale (Δ/ε) is halved (via its sensitivity)."""
    original = laplace_sanitizer.bounded_laplace_mechanism

    def halved(values, *, sensitivity, **kwargs):
        return original(values, sensitivity=sensitivity / 2, **kwargs)

    monkeypatch.setattr(laplace_sanitizer, "bounded_laplace_mechanism", halved)


def test_planted_bug_is_flagged_by_both_modes(reference, tmp_path, halved_lap_noise):
    out = tmp_path / "bug"
    status, stdout, stderr = _check(out, reference)
    assert status == 1, stdout + stderr
    assert "check statistical: FAIL" in stdout and "harness check --update" in stdout
    flagged = pd.read_csv(out / "bowen_liu_sim1" / "ci" / "check.csv")
    assert set(flagged["method"]) == {"LAP"}  # other methods' streams are untouched
    assert {"bias", "emp_se", "rmse", "width", "model_se"} <= set(flagged["metric"])
    worst = flagged.groupby("metric")["z"].apply(lambda z: z.abs().max())
    print("planted bug, largest |z| by metric:", worst.round(1).to_dict(),
          "threshold", round(flagged["threshold"].iloc[0], 2))
    # every metric clears the threshold by a margin (emp_se least: its MCSE makes no normality
    # assumption, and LAP's estimates, clamped to [0, n], are far from normal)
    assert (worst > 1.25 * flagged["threshold"].iloc[0]).all()
    # exact mode lists the changed cells: LAP only, with old and new values
    status, stdout, _ = _check(out, reference, "--mode=exact")
    assert status == 1 and "check exact: FAIL" in stdout
    listed = pd.read_csv(out / "bowen_liu_sim1" / "ci" / "check.csv")
    assert set(listed["method"]) == {"LAP"} and len(listed) > 100
    assert {"old", "new", "scenario", "ln_eps", "estimand", "metric"} <= set(listed.columns)
    assert _listed_rows(stdout, "LAP") and not _listed_rows(stdout, "MODIPS")


@pytest.fixture(scope="module")
def reseeded(tmp_path_factory):
    return tmp_path_factory.mktemp("reseeded")


def test_reseeded_run_passes_statistical_and_fails_exact(reference, reseeded):
    status, stdout, stderr = _check(reseeded, reference, "seed=7")
    assert status == 0, stdout + stderr
    assert "check statistical: PASS" in stdout
    assert "note: seed=20200501 (snapshot) vs 7 (this run)" in stdout
    z = float(re.search(r"largest \|z\| ([\d.]+)", stdout).group(1))
    threshold = float(re.search(r"threshold \|z\| > ([\d.]+)", stdout).group(1))
    assert 1.5 < z < threshold  # the numbers did move, within Monte Carlo error
    status, stdout, _ = _check(reseeded, reference, "seed=7", "--mode", "exact")
    assert status == 1 and "check exact: FAIL" in stdout
    n_differ = int(re.search(r"(\d+) differ", stdout).group(1))
    assert n_differ > 800
    listed = pd.read_csv(reseeded / "bowen_liu_sim1" / "ci" / "check.csv")
    assert set(listed["method"]) == {"Ori", "MS", "MODIPS", "LAP", "MD", "BB-MR"}


def test_update_rewrites_the_snapshot_and_prints_the_changes(reference, reseeded, tmp_path):
    ref = tmp_path / "ref"
    (ref / "bowen_liu_sim1").mkdir(parents=True)
    old_bytes = (reference / "bowen_liu_sim1" / "ci.parquet").read_bytes()
    (ref / "bowen_liu_sim1" / "ci.parquet").write_bytes(old_bytes)
    status, stdout, stderr = _check(reseeded, ref, "seed=7", "--update")
    assert status == 0, stderr
    assert "changes relative to the old snapshot:" in stdout
    assert "check statistical: PASS" in stdout and "snapshot updated" in stdout
    assert (ref / "bowen_liu_sim1" / "ci.parquet").read_bytes() != old_bytes
    assert not list((ref / "bowen_liu_sim1").glob(".tmp-*"))
    status, stdout, _ = _check(reseeded, ref, "seed=7", "--mode", "exact")
    assert status == 0 and "check exact: PASS" in stdout
    status, stdout, _ = _check(reseeded, ref, "seed=7", "--update")
    assert status == 0 and "snapshot unchanged" in stdout


def test_committed_snapshot_covers_the_ci_profile():
    """results/reference/bowen_liu_sim1/ci.parquet (what CI checks) holds every cell of the
    study's profile=ci sweep."""
    path = check.REFERENCE_DIR / "bowen_liu_sim1" / "ci.parquet"
    frame, meta = check.read_snapshot(path)
    assert meta["profile"] == "ci" and meta["n_replicates"] == 1000
    groups = frame.groupby(["scenario", "method", "epsilon"], dropna=False)["metric"]
    assert groups.ngroups == 12 * (2 + 4 * 9)
    assert (groups.size() == groups.size().iloc[0]).all()  # every group has every metric
    assert {"bias", "rmse", "coverage", "width", "usable_prop"} <= set(frame["metric"])
    assert np.isfinite(frame.loc[frame["metric"] == "bias", "value"]).all()
