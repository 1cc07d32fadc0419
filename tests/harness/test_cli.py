"""The command line (DESIGN §7): one-line errors with exit status 2 before anything is written,
the run / claims / table / list sub-commands, and the failure log with ``harness replay``."""

import contextlib
import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.bowen_liu.sim1.study import Simulation1
from harness import cli, config
from harness.engine.sweep import run_sweep

REPO = Path(__file__).resolve().parents[2]
ROSTER = ["Ori", "MS", "MODIPS", "LAP", "MD", "BB-MR"]
TOP_KEYS = list(config.TOP_KEYS)
TINY = [
    "study=bowen_liu_sim1",
    "profile=ci",
    "study.replicates.ci=100",
    "block_size=100",
    "study.grid.n=[40,100]",
    "study.grid.pi=[0.15,0.5]",
    "study.log_epsilon=[-2,0,2]",
    "executor.n_jobs=1",
]


def _main(argv) -> tuple[int, str, str]:
    """Run ``harness.cli.main`` in this process; return (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _assert_one_line_error(status, stdout, stderr, key, allowed_values):
    assert status == 2
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    line = lines[0]
    assert line.startswith("error: "), line
    assert key in line, line
    if allowed_values:
        assert "allowed:" in line, line
        listed = line.split("allowed:", 1)[1]
        for value in allowed_values:
            assert re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", listed), (value, line)
    assert "Traceback" not in stdout + stderr


# (argv before out_dir, key named in the message, allowed values listed or None)
BAD_INPUT = {
    "unknown study": (["run", "study=nope"], "study", ["bowen_liu_sim1"]),
    "unknown method": (["run", "methods=[XX]"], "methods", ROSTER),
    "unknown method (scalar)": (["run", "methods=XX"], "methods", ROSTER),
    "unknown profile": (["run", "profile=nope"], "profile", ["ci", "paper", "quick"]),
    "epsilon zero": (["run", "study.epsilon=[0,1]"], "study.epsilon", None),
    "epsilon negative": (["run", "study.epsilon=[1,-0.5]"], "study.epsilon", None),
    "n below 2": (["run", "study.grid.n=[1]"], "study.grid.n", None),
    "n not integer": (["run", "study.grid.n=[40,2.5]"], "study.grid.n", None),
    "pi above 1": (["run", "study.grid.pi=[1.5]"], "study.grid.pi", None),
    "pi zero": (["run", "study.grid.pi=[0]"], "study.grid.pi", None),
    "method twice": (["run", "methods=[LAP,LAP]"], "methods", None),
    "grid value twice": (["run", "study.grid.n=[40,40]"], "study.grid.n", None),
    "budget weight key": (
        ["run", "+study.roster.MODIPS.budget_weights.x=1"],
        "study.roster.MODIPS.budget_weights",
        ["n1"],
    ),
    "ori with m": (["run", "+study.roster.Ori.m=5"], "study.roster.Ori.m", None),
    "m below 1": (["run", "study.roster.LAP.m=0"], "study.roster.LAP.m", None),
    "budget weights": (
        ["run", "+study.roster.MODIPS.budget_weights.n1=0.5"],
        "study.roster.MODIPS.budget_weights",
        None,
    ),
    "unknown top-level key": (["run", "foo=1"], "foo", TOP_KEYS),
    "unknown study key (+)": (
        ["run", "+study.bogus=1"],
        "study.bogus",
        ["name", "module", "grid", "roster", "prior", "postprocess"],
    ),
    "unknown study key": (["run", "study.bogus=1"], "study.bogus", None),
    "unknown command": (
        ["bogus"], "command", ["run", "aggregate", "plot", "table", "claims", "list", "replay"]
    ),
    "n_jobs zero": (["run", "executor.n_jobs=0"], "executor.n_jobs", None),
    "negative seed": (["run", "seed=-1"], "seed", None),
    "unknown list": (["list", "bogus"], "list", ["studies", "methods", "estimands",
                                                 "synthesizers"]),
    "replay without key": (["replay", "profile=ci"], "replay", None),
    "aggregate before run": (["aggregate", *TINY], "tasks", None),
    "claims before run": (["claims", *TINY], "tasks", None),
}


@pytest.mark.parametrize("argv, key, allowed_values", BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_bad_input_one_line_error_and_nothing_written(argv, key, allowed_values, tmp_path):
    out = tmp_path / "out"
    status, stdout, stderr = _main([*argv, f"out_dir={out}"])
    _assert_one_line_error(status, stdout, stderr, key, allowed_values)
    assert not out.exists() or not any(out.iterdir())


def test_bad_input_in_a_subprocess(tmp_path):
    out = tmp_path / "out"
    res = subprocess.run(  # no sub-command: "run" is the default
        [sys.executable, "-m", "harness.cli", "methods=[XX]", f"out_dir={out}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    _assert_one_line_error(res.returncode, res.stdout, res.stderr, "methods", ROSTER)
    assert res.stdout == ""
    assert not out.exists()


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["help"], ["bench", "--help"],
                                  ["report", "paper=steps", "-h"], ["check", "--help"]])
def test_help_exits_zero(argv):
    """--help after a sub-command (and its options) prints the usage too, not an error."""
    status, stdout, stderr = _main(argv)
    assert status == 0 and stdout.startswith("usage: harness") and stderr == ""
    assert "harness bench --release=" in stdout


def test_help_names_every_subcommand_and_every_list_target():
    """--help is made from the tables the commands dispatch on (cli.COMMANDS,
    cli.LIST_TARGETS), so a target added there is in the help."""
    _, stdout, _ = _main(["--help"])
    assert set(cli.LIST_TARGETS) == {"studies", "methods", "estimands", "synthesizers"}
    listed = re.search(r"harness list \[([\w|]+)\]", stdout)
    assert listed, stdout
    assert listed.group(1).split("|") == list(cli.LIST_TARGETS)
    commands = re.search(r"usage: harness \[([\w|]+)\]", stdout).group(1).split("|")
    assert commands == list(cli.SUBCOMMANDS) and set(commands) == set(cli.COMMANDS)
    status, stdout, _ = _main(["list", "synthesizers"])
    assert status == 0 and "laplace_sanitizer" in stdout.split()


# --- a tiny sweep end to end ------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli")
    argv = [*TINY, f"out_dir={out}"]
    status, stdout, stderr = _main(["run", *argv])
    assert status == 0, stderr
    return argv, stdout, out


def _printed_path(stdout: str, label: str) -> Path:
    m = re.search(rf"^{label}:\s+(\S+)", stdout, flags=re.M)
    assert m, f"no {label!r} line in:\n{stdout}"
    return Path(m.group(1))


def test_run_prints_where_metrics_tables_and_figures_are(tiny_run):
    _, stdout, out = tiny_run
    root = out / "bowen_liu_sim1" / "ci"
    assert re.search(r"^24 tasks: 0 already done, 24 run, 0 failed", stdout, flags=re.M), stdout
    metrics = _printed_path(stdout, "metrics")
    assert metrics == root / "metrics.csv" and metrics.stat().st_size > 0
    assert (root / "metrics.parquet").exists()
    tables = _printed_path(stdout, "tables")
    assert tables == root / "tables"
    assert (tables / "supp_table_1.csv").stat().st_size > 0
    figures = _printed_path(stdout, "figures")
    assert figures == root / "figures"
    assert sorted(figures.glob("*.png")), "no figure written"
    assert re.search(r"^claims:\s+\d+ claims: \d+ PASS, \d+ FAIL, \d+ UNDECIDED", stdout,
                     flags=re.M), stdout


def test_the_claims_hint_repeats_the_runs_overrides(tiny_run, tmp_path, monkeypatch):
    """'details: harness claims ...' carries the run's overrides (its out_dir and grid): run
    from elsewhere, as printed, it reads this very sweep."""
    argv, stdout, out = tiny_run
    m = re.search(r"\(details: (harness claims .*)\)$", stdout, flags=re.M)
    assert m, stdout
    words = shlex.split(m.group(1))
    assert f"out_dir={out}" in words and "study.grid.n=[40,100]" in words
    monkeypatch.chdir(tmp_path)  # no results/ here: only the hint's out_dir finds the sweep
    status, details, err = _main(words[1:])
    assert status == 0, err
    assert re.search(r"^\d+ claims: \d+ PASS, \d+ FAIL, \d+ UNDECIDED", details, flags=re.M)


def test_claims_prints_pass_fail_lines(tiny_run):
    argv, _, _ = tiny_run
    status, stdout, _ = _main(["claims", *argv])
    assert status == 0
    verdicts = re.findall(r"^\[(PASS|FAIL|UNDECIDED)\] (\S+):", stdout, flags=re.M)
    from experiments.bowen_liu.sim1.claims import CLAIMS

    assert [cid for _, cid in verdicts] == [c.id for c in CLAIMS]
    assert {"PASS", "FAIL"} & {v for v, _ in verdicts}  # something was decided
    assert re.search(r"^\d+ claims: \d+ PASS, \d+ FAIL, \d+ UNDECIDED", stdout, flags=re.M)


def test_table_prints_supplementary_table_1_beside_the_paper(tiny_run):
    pytest.importorskip("experiments.bowen_liu.sim1.tables")
    from experiments.bowen_liu.paper_numbers import SUPP_TABLE_1

    argv, _, out = tiny_run
    status, stdout, _ = _main(["table", *argv])
    assert status == 0
    assert "== supp_table_1 ==" in stdout
    block = stdout.split("== supp_table_1 ==", 1)[1].split("==", 1)[0].strip().splitlines()
    header = block[0].split()
    assert header[:6] == ["n", "pi", "log_epsilon", "paper", "ours", "ours_mcse"]
    body = [dict(zip(header, line.split(), strict=True)) for line in block[1:]]
    # ln ε ∈ {-2, 0} of the paper's {-4, -2, 0} are in the tiny grid, for 2 n x 2 π
    assert len(body) == 2 * 2 * 2
    for r in body:
        paper = SUPP_TABLE_1[(int(r["n"]), float(r["pi"]))][int(r["log_epsilon"])]
        assert float(r["paper"]) == pytest.approx(paper)
        assert 0 <= float(r["ours"]) <= 1 and int(r["R"]) == 100
    assert _printed_path(stdout, "tables") == out / "bowen_liu_sim1" / "ci" / "tables"


def test_list_methods_studies_and_estimands(tmp_path):
    status, stdout, _ = _main(["list", "methods", f"out_dir={tmp_path / 'o'}"])
    assert status == 0
    assert [line.split()[0] for line in stdout.splitlines()] == ROSTER
    assert "laplace_sanitizer" in stdout and "bb_mcclure_reiter" in stdout
    status, stdout, _ = _main(["list", "studies"])
    assert status == 0 and "bowen_liu_sim1" in stdout.split()
    status, stdout, _ = _main(["list", "estimands", "study.grid.n=[40]", "study.grid.pi=[0.5]"])
    assert status == 0 and stdout.strip() == "{'n': 40, 'pi': 0.5} {'pi': 0.5}"
    assert not (tmp_path / "o").exists()


def test_list_methods_in_a_subprocess():
    res = subprocess.run(
        [sys.executable, "-m", "harness.cli", "list", "methods", "methods=[LAP]"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert [line.split()[0] for line in res.stdout.splitlines()] == ROSTER


# --- failure log and replay -------------------------------------------------------------------


class Boom(RuntimeError):
    pass


BAD_SCENARIO = {"n": 40, "pi": 0.15}
FAILING_KEY = "bowen_liu_sim1/n=40,pi=0.15/block=0/BB-MR"


def _failing_analyse(original):
    def analyse(self, sets, scenario):
        # BB-MR is the only method of this roster with m = 1 released set
        if dict(scenario) == BAD_SCENARIO and sets.counts.shape[1] == 1:
            raise Boom("injected failure")
        return original(self, sets, scenario)

    return analyse


@pytest.fixture
def failing_overrides(tmp_path):
    return [*TINY, "methods=[LAP,BB-MR]", f"out_dir={tmp_path}"]


def test_failure_is_logged_and_replayed(failing_overrides, tmp_path, monkeypatch):
    overrides = failing_overrides
    monkeypatch.setattr(Simulation1, "analyse", _failing_analyse(Simulation1.analyse))
    cfg = config.load(overrides)
    assert cfg["executor"]["n_jobs"] == 1  # sequential, in this process: the patch applies
    summary = run_sweep(cfg, progress=False)
    assert summary.n_tasks == 8 and summary.ran == 7
    assert [f["key"] for f in summary.failed] == [FAILING_KEY]
    root = summary.root

    log = [json.loads(line) for line in (root / "failures.jsonl").read_text().splitlines()]
    assert len(log) == 1
    rec = log[0]
    assert rec["key"] == FAILING_KEY and rec["ok"] is False
    assert rec["seed"] == cfg["seed"] == 20200501
    assert rec["error"] == "Boom: injected failure"
    assert "Traceback" in rec["traceback"] and "injected failure" in rec["traceback"]
    assert "analyse" in rec["traceback"]
    assert len(list((root / "tasks").glob("[!.]*.parquet"))) == 7

    # the CLI reports the failure and exits 1; the finished tasks are not run again
    status, stdout, stderr = _main(["run", *overrides])
    assert status == 1
    assert "8 tasks: 7 already done, 0 run, 1 failed" in stdout
    assert f"failed: {FAILING_KEY}: Boom: injected failure" in stderr
    assert "failure log:" in stderr and str(root / "failures.jsonl") in stderr
    assert len((root / "failures.jsonl").read_text().splitlines()) == 1  # log of the last run

    # replay runs the one task again in this process and re-raises its error
    with pytest.raises(Boom, match="injected failure"):
        cli.main(["replay", f"'{FAILING_KEY}'", *overrides])
    # a key that is not a task of this sweep is a one-line error
    status, stdout, stderr = _main(["replay", "'bowen_liu_sim1/n=41,pi=0.15/block=0/BB-MR'",
                                    *overrides])
    _assert_one_line_error(status, stdout, stderr, "replay", None)
    assert "no task" in stderr

    # once the cause is gone, the replay succeeds, and so does the sweep
    monkeypatch.undo()
    status, stdout, stderr = _main(["replay", f"'{FAILING_KEY}'", *overrides])
    assert status == 0, stderr
    # BB-MR is private: 100 replicates x 3 ε x 1 estimand
    assert stdout.startswith(f"replayed {FAILING_KEY}: 300 rows")
    summary = run_sweep(cfg, progress=False)
    assert (summary.skipped, summary.ran, summary.failed) == (7, 1, [])
    assert not (root / "failures.jsonl").exists()


def test_replay_accepts_the_key_as_logged(failing_overrides):
    status, stdout, stderr = _main(["replay", FAILING_KEY, *failing_overrides])
    assert status == 0, stderr
    assert stdout.startswith(f"replayed {FAILING_KEY}")


def test_study_block_size_is_the_default_and_the_command_line_wins(tmp_path):
    """A study may set its replicates per task (``study.block_size``); ``block_size=`` on the
    command line overrides it; without either, 500. A bad value names the key it came from."""
    base = [a for a in TINY if not a.startswith("block_size=")] + [f"out_dir={tmp_path}"]
    assert config.load(base)["block_size"] == 500
    assert config.load([*base, "+study.block_size=7"])["block_size"] == 7
    assert config.load([*base, "+study.block_size=7", "block_size=3"])["block_size"] == 3
    with pytest.raises(config.ConfigError, match=r"^study\.block_size: "):
        config.load([*base, "+study.block_size=0"])
    with pytest.raises(config.ConfigError, match=r"^block_size: "):
        config.load([*base, "block_size=0"])


def test_a_reader_that_closes_the_pipe_early_gets_no_error(tmp_path):
    """`harness list studies | head -1`: the reader closes the pipe before the listing is
    written; the command ends quietly with status 0 (it used to print 'cannot write')."""
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "list", "studies"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    proc.stdout.close()  # before the interpreter has even started: the write meets EPIPE
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and err == "", err
