"""Bad input found by trying the CLI as a hostile new user (DESIGN §7): each case prints one
line on stderr naming the key, exits with status 2, and creates or changes no file."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from study_helpers import cli_main

from harness import config as config_mod
from harness.engine.study import Study, load_study
from harness.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
G = ["study.grid.n=[40]", "study.grid.pi=[0.1]", "profile=ci"]


def _tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): (p.is_dir() or p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))}


def _assert_one_line(status, out, err, *words):
    assert status == 2, out + err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in out + err
    for w in words:
        assert w in lines[0], lines[0]


# case: (overrides, words the line must contain)
CASES = {
    "grid axis scalar": (["study.grid.n=40"], ["study.grid.n", "must be a list", "[40,100]"]),
    "epsilon scalar": (["study.epsilon=1"], ["study.epsilon", "must be a list"]),
    "log_epsilon scalar": (["study.log_epsilon=2"], ["study.log_epsilon", "must be a list"]),
    "log_epsilon zero": (["study.log_epsilon=0"], ["study.log_epsilon", "must be a list"]),
    "log_epsilon empty": (["study.log_epsilon=[]"], ["study.log_epsilon", "empty"]),
    "epsilon overflows": (["study.log_epsilon=[800]"], ["study.log_epsilon", "[-700, 700]"]),
    "epsilon underflows": (["study.log_epsilon=[-800]"], ["study.log_epsilon", "[-700, 700]"]),
    "sim4 n = 0": (["study=bowen_liu_sim4", "study.grid.n=[0]"], ["study.grid.n", ">= 3"]),
    "sim4 n < 0": (["study=bowen_liu_sim4", "study.grid.n=[-5]"], ["study.grid.n", ">= 3"]),
    "unknown grid axis": (["study=bowen_liu_sim3", "+study.grid.m=[1]"], ["study.grid", "n"]),
    "sweep escapes": (["sweep=../../x"], ["sweep", "'../../x'", "no '/'"]),
    "sweep is ..": (["sweep=.."], ["sweep", "'..'"]),
    "empty out_dir": (["out_dir="], ["out_dir", "''"]),
    "empty methods": (["methods=[]"], ["methods", "methods=null", "Ori", "BB-MR"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_and_writes_nothing(case, tmp_path, monkeypatch):
    overrides, words = CASES[case]
    out_dir = tmp_path / "out"
    before = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)  # out_dir="" would write here
    base = ["profile=ci"] if any(o.startswith("study=") for o in overrides) else G
    argv = [*base, f"out_dir={out_dir}", *overrides]  # later overrides win
    _assert_one_line(*cli_main("run", *argv), *words)
    assert _tree(tmp_path) == before
    assert not (tmp_path.parent / "x").exists()


def test_an_out_dir_that_is_a_file(tmp_path):
    target = tmp_path / "results"
    target.write_text("not a directory")
    before = _tree(tmp_path)
    _assert_one_line(*cli_main("run", *G, f"out_dir={target}"), "out_dir", str(target), "a file")
    # a file on the way to the sweep directory (<out_dir>/<study>/<sweep>)
    assert _tree(tmp_path) == before
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "bowen_liu_sim1").write_text("x")
    before = _tree(tmp_path)
    _assert_one_line(*cli_main("run", *G, f"out_dir={tmp_path / 'r'}"), "out_dir", "a file")
    (tmp_path / "r" / "bowen_liu_sim1").unlink()
    (tmp_path / "r" / "bowen_liu_sim1").mkdir()
    (tmp_path / "r" / "bowen_liu_sim1" / "ci").write_text("x")
    before = _tree(tmp_path)
    _assert_one_line(*cli_main("run", *G, f"out_dir={tmp_path / 'r'}"), "out_dir", "ci is a file")
    assert _tree(tmp_path) == before


def test_an_out_dir_without_write_permission(tmp_path, monkeypatch):
    """Root ignores permission bits, so the probe stands in for a read-only directory; the
    safety net below covers an OSError that slips past it."""
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setattr(config_mod, "writable", lambda p: Path(p) != locked)
    before = _tree(tmp_path)
    _assert_one_line(*cli_main("run", *G, f"out_dir={locked / 'deeper'}"), "out_dir",
                     "cannot write", str(locked))
    assert _tree(tmp_path) == before


def test_an_os_error_while_writing_is_one_line(tmp_path, monkeypatch):
    from harness.engine import sweep as sweep_mod

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied", str(tmp_path / "out"))

    monkeypatch.setattr(sweep_mod.SweepStore, "write_json", refuse)
    status, out, err = cli_main("run", *G, f"out_dir={tmp_path / 'out'}", "executor.n_jobs=1")
    _assert_one_line(status, out, err, "Permission denied", str(tmp_path / "out"))


@pytest.mark.parametrize("where", ["config.yaml", "study/bowen_liu_sim1.yaml"])
def test_malformed_yaml_is_one_line_with_file_and_line(where, tmp_path):
    conf = tmp_path / "conf"
    shutil.copytree(REPO / "conf", conf)
    path = conf / where
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, "broken: [1, 2", "other: : :"]) + "\n")
    out_dir = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", f"out_dir={out_dir}", "executor.n_jobs=1"],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "HARNESS_CONF": str(conf)},
        timeout=120,
    )
    _assert_one_line(proc.returncode, proc.stdout, proc.stderr, f"{path}:", "cannot parse YAML")
    line = int(proc.stderr.split(f"{path}:", 1)[1].split(":", 1)[0])
    assert len(lines) < line <= len(lines) + 3  # the line of the damage
    assert not out_dir.exists()


def test_every_grid_axis_is_checked_by_the_study_contract():
    class NoRules(Study):
        def generate(self, *a): ...
        def estimands(self, *a): ...
        def analyse(self, *a): ...
        def method(self, *a): ...

    study = NoRules({"name": "x", "grid": {"n": [10]}})
    with pytest.raises(ConfigError, match="declares no grid_rules"):
        study.validate_grid()
    NoRules.grid_rules = {"n": {"integer": True, "minimum": 2}}
    with pytest.raises(ConfigError, match=r"study.grid.n: every value must be an integer >= 2"):
        NoRules({"name": "x", "grid": {"n": [10, 1]}}).validate_grid()
    with pytest.raises(ConfigError, match="the axes of x are n, got n, k"):
        NoRules({"name": "x", "grid": {"n": [10], "k": [1]}}).validate_grid()
    # every shipped study declares its axes
    for name in config_mod.options("study"):
        cfg = config_mod.load([f"study={name}", "profile=ci"])
        assert type(load_study(cfg["study"])).grid_rules.keys() == cfg["study"]["grid"].keys()
