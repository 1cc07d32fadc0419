"""What a command and each of its workers import before any work: the configuration, the engine,
the registries of synthesizers, analyses and metrics, and the study's module. A module-level
import of a heavy library there costs every process (the command's own and each joblib
worker) its import time before the first task: scipy.stats alone took about 1 s of the 2.7 s a
worker spent importing (issue 23: the whole command is what a user waits for). The harness
imports such libraries where it uses them, at call time; a study's module may import what its
own data or analysis needs (Bi & Shen's known-F studies build scipy.stats distributions)."""

import subprocess
import sys

HEAVY = ("scipy.stats", "scipy.optimize", "matplotlib", "statsmodels", "sklearn", "jax")

PROBE = """
import sys
heavy = sys.argv[1].split(",")
from harness import config, evaluation, inference, metrics, privacy, synthesizers
from harness.engine import study, sweep, task
config.load(["study=bowen_liu_sim1", "profile=ci"])  # a study whose module needs none of them
print(" ".join(m for m in heavy if m in sys.modules))
import scipy.stats  # the control: a heavy import the probe must see
print(" ".join(m for m in heavy if m in sys.modules))
"""


def test_the_engine_imports_no_heavy_library_at_start_up():
    """One process: what the engine's start-up imported, then (the probe's control) the same
    listing after an import of scipy.stats, which must name it."""
    out = subprocess.run([sys.executable, "-c", PROBE, ",".join(HEAVY)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    at_start, after_control = (line.split() for line in out.stdout.split("\n")[:2])
    assert at_start == [], f"imported at start-up: {' '.join(at_start)}"
    assert "scipy.stats" in after_control
