"""``harness -m``: config variants with Hydra's sweeper semantics, each validated up front and
run into its own sweep directory; the Slurm launcher config composes (DESIGN §6–§7)."""

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from pandas.testing import assert_frame_equal

from harness import cli, config, multirun
from harness.engine.aggregate import read_rows
from harness.engine.sweep import run_sweep, sweep_dir

REPO = Path(__file__).resolve().parents[2]
TINY = [
    "study=bowen_liu_sim1",
    "profile=ci",
    "study.replicates.ci=100",
    "block_size=50",
    "study.grid.pi=[0.15]",
    "study.log_epsilon=[-1,1]",
    "methods=[Ori,LAP]",
    "executor.n_jobs=1",
]
VARIANTS = "study.grid.n=[40],[100]"
#: a run's report draws its figures on loky worker processes when more than one core is counted
#: (harness.outputs.write_figures): two more interpreters per harness process (and per submitit
#: job), ~4 CPU-s each time. These tests are about the variants, not the figures' pool, so their
#: fresh processes count one core and draw the figures in-process (same figures).
ONE_CORE = dict(os.environ, LOKY_MAX_CPU_COUNT="1")


def _main(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _harness(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=ONE_CORE)


def _rows(cfg):
    return read_rows(cfg).drop(columns=["code_version"])


def test_expand_follows_hydra_basic_sweeper():
    variants, swept = multirun.expand(["a=1", "b=x,y", "c=[1,2],[3]", "a=2,3", "+d=range(0,2)"])
    assert swept == ["a", "b", "c", "d"]
    assert len(variants) == 2 * 2 * 2 * 2
    assert variants[0] == ["a=2", "b=x", "c=[1,2]", "+d=0"]
    assert variants[-1] == ["a=3", "b=y", "c=[3]", "+d=1"]
    assert multirun.expand(["a=1", "b=[1,2]"]) == ([["a=1", "b=[1,2]"]], [])


def test_sweep_names_come_from_the_swept_overrides(tmp_path):
    configs, swept = multirun.plan([*TINY, VARIANTS, "block_size=25,50", f"out_dir={tmp_path}"])
    assert swept == ["block_size", "study.grid.n"]
    # the product runs over the keys in the order given (block_size comes first, in TINY); the
    # name lists the swept keys sorted, so it does not depend on that order
    assert [c["sweep"] for c in configs] == [
        "ci+block_size-25+study.grid.n-40", "ci+block_size-25+study.grid.n-100",
        "ci+block_size-50+study.grid.n-40", "ci+block_size-50+study.grid.n-100",
    ]
    # a swept sweep name is used as it is; study and profile already name the directory
    configs, _ = multirun.plan([*TINY, "sweep=a,b", f"out_dir={tmp_path}"])
    assert [c["sweep"] for c in configs] == ["a", "b"]
    configs, _ = multirun.plan([*TINY, "profile=ci,quick", f"out_dir={tmp_path}"])
    assert [c["sweep"] for c in configs] == ["ci", "quick"]
    assert not any(tmp_path.iterdir())  # planning writes nothing


def test_local_multirun_runs_each_variant_into_its_own_sweep_dir(tmp_path):
    proc = _harness("-m", *TINY, VARIANTS, f"out_dir={tmp_path}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    study_dir = tmp_path / "bowen_liu_sim1"
    assert sorted(p.name for p in study_dir.iterdir()) == [
        "ci+study.grid.n-100", "ci+study.grid.n-40"]
    for n in (40, 100):
        root = study_dir / f"ci+study.grid.n-{n}"
        manifest = json.loads((root / "manifest.json").read_text())
        assert manifest["config"]["study"]["grid"]["n"] == [n]
        assert len(manifest["tasks"]) == 2 * 2  # 2 blocks x 2 methods
        assert (root / "metrics.csv").exists()
    # Hydra's own records go beside the sweeps, not into them
    assert (tmp_path / "multirun").is_dir()
    # each variant's hint to its claims names its own sweep directory
    hints = re.findall(r"\(details: (harness claims .*)\)$", proc.stdout, flags=re.M)
    assert len(hints) == 2, proc.stdout[-3000:]
    for n, hint in zip((40, 100), sorted(hints, key=lambda h: "n=[100]" in h), strict=True):
        words = shlex.split(hint)
        assert f"sweep=ci+study.grid.n-{n}" in words and f"out_dir={tmp_path}" in words
        assert f"study.grid.n=[{n}]" in words
    status, details, err = _main(shlex.split(hints[0])[1:])
    assert status == 0, err
    # a variant's rows are those of a plain run with the same overrides
    cfg = config.load([*TINY, "study.grid.n=[100]", f"out_dir={tmp_path / 'plain'}"])
    assert run_sweep(cfg, progress=False).ran == 4
    variant = dict(cfg, out_dir=str(tmp_path), sweep="ci+study.grid.n-100")
    assert sweep_dir(variant) == study_dir / "ci+study.grid.n-100"
    assert_frame_equal(_rows(variant), _rows(cfg), check_exact=True)


def _assert_one_line(status, stdout, stderr, *needles):
    assert status == 2, (stdout, stderr)
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert "Traceback" not in stdout + stderr


def test_every_variant_is_validated_before_anything_runs(tmp_path):
    out = tmp_path / "out"
    _assert_one_line(*_main(["-m", *TINY, "study.grid.n=[40],[1]", f"out_dir={out}"]),
                     "variant 2 of 2", "study.grid.n=[1]", "study.grid.n:")
    _assert_one_line(*_main(["-m", *TINY, "methods=[LAP],[XX]", f"out_dir={out}"]),
                     "variant 2 of 2", "methods", "allowed:")
    _assert_one_line(*_main(["--multirun", *TINY, "study.grid.n=[40],[40]", f"out_dir={out}"]),
                     "variants 1 and 2", "would both write")
    _assert_one_line(*_main(["-m", *TINY, "block_size=interval(1,2)", f"out_dir={out}"]),
                     "block_size")
    _assert_one_line(*_main(["-m", "aggregate", *TINY, f"out_dir={out}"]), "-m", "allowed: run")
    _assert_one_line(*_main(["-m", *TINY, VARIANTS, "hydra/launcher=nope", f"out_dir={out}"]),
                     "hydra/launcher", "allowed:", "basic")
    assert not out.exists()


def test_submitit_launcher_missing_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "hydra_plugins.hydra_submitit_launcher", None)
    out = tmp_path / "out"
    _assert_one_line(*_main(["-m", *TINY, VARIANTS, "hydra/launcher=slurm", f"out_dir={out}"]),
                     "hydra/launcher=slurm", 'pip install -e ".[slurm]"')
    assert not out.exists()


def test_slurm_launcher_config_composes(monkeypatch, tmp_path):
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(config.CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["hydra/launcher=slurm",
                                                       "hydra.launcher.partition=short"],
                      return_hydra_config=True)
    launcher = cfg.hydra.launcher
    assert launcher._target_.endswith("submitit_launcher.SlurmLauncher")
    assert launcher.partition == "short" and launcher.tasks_per_node == 1
    assert launcher.cpus_per_task >= 1 and launcher.timeout_min > 0
    assert launcher.submitit_folder.endswith("/.submitit/%j")
    assert "slurm" in multirun.launchers()
    # without Slurm, submitting stops on one line before anything is written
    monkeypatch.setattr(multirun.shutil, "which", lambda name: None)
    out = tmp_path / "out"
    _assert_one_line(*_main(["-m", *TINY, VARIANTS, "hydra/launcher=slurm", f"out_dir={out}"]),
                     "hydra/launcher=slurm", "sbatch")
    assert not out.exists()


def test_slurm_launcher_builds_the_sbatch_script(tmp_path):
    """Up to submission: a stand-in sbatch keeps the job-array script that submitit writes."""
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(
        f'#!/bin/sh\nfor a; do last="$a"; done\ncp "$last" {tmp_path}/job.sh\n'
        'echo "no Slurm here" >&2\nexit 1\n')
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 1\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "-m", *TINY, VARIANTS, "hydra/launcher=slurm",
         "hydra.launcher.partition=short", "hydra.launcher.cpus_per_task=8",
         f"out_dir={tmp_path / 'out'}"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode != 0 and "no Slurm here" in proc.stderr
    script = (tmp_path / "job.sh").read_text()
    for line in ("#SBATCH --array=0-1%", "#SBATCH --cpus-per-task=8", "#SBATCH --partition=short",
                 "#SBATCH --time=720", "#SBATCH --ntasks-per-node=1",
                 "#SBATCH --job-name=dips-harness", "-m submitit.core._submit"):
        assert line in script, (line, script)
    assert str(tmp_path / "out" / "multirun") in script  # logs beside the sweeps
    assert not (tmp_path / "out" / "bowen_liu_sim1").exists()  # nothing ran


def test_multirun_through_the_submitit_launcher(tmp_path):
    """The Slurm path without Slurm: submitit's local executor pickles the job function and runs
    the variant in its own process, as a Slurm job would. One variant (a sweep of one value,
    so that the job still names its sweep directory from the swept override): each variant's
    job is the same code (harness.multirun.job, which the local launcher also runs) with other
    overrides, and each costs two fresh interpreters (its submitit controller and the unpickled
    Hydra job with its report, ~6 CPU-s); two variants, each in its own sweep directory, are the
    local launcher's test above, and the job array of two is the sbatch script's."""
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    proc = _harness("-m", *TINY, "study.grid.n=choice([100])", "hydra/launcher=submitit_local",
                    "hydra.launcher.timeout_min=5", f"out_dir={tmp_path}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert [p.name for p in (tmp_path / "bowen_liu_sim1").iterdir()] == ["ci+study.grid.n-100"]
    root = tmp_path / "bowen_liu_sim1" / "ci+study.grid.n-100"
    assert len(list((root / "tasks").glob("*.parquet"))) == 4
    assert (root / "metrics.csv").exists()
    logs = list((tmp_path / "multirun").glob("*/.submitit/*/*_log.out"))
    assert len(logs) == 1 and "4 tasks: 0 already done, 4 run" in logs[0].read_text()
