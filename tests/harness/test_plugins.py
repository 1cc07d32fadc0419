"""Plug-ins (harness/plugins.py): a synthesizer from another installed package registers through
the ``dips_harness.synthesizers`` entry point and runs in a paper's study beside its methods;
``harness list`` says where each came from; a broken plug-in is one line naming it.

The tiny plug-in package is "installed" the way an installer leaves it: a module and its
``.dist-info`` (METADATA, entry_points.txt) in a directory on the path, given to the subprocess
(and so to its worker processes) through PYTHONPATH."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from plugin_helpers import env_with, install_plugin

PLUGIN = '''
"""A geometric-noise histogram synthesizer, written only against the harness's public API."""
import numpy as np

from harness.privacy import geometric_mechanism
from harness.synthesizers import SetwiseSynthesizer
from harness.privacy import largest_remainder_round


class GeometricHistogram(SetwiseSynthesizer):
    """Cell counts + two-sided geometric noise (ε/m per set, Δ = 2), floored at 0, apportioned
    to n records."""

    name = "geometric_histogram"

    def __init__(self, m: int = 1):
        super().__init__(m)

    def _one_set(self, data, eps_set, ledger, rng, j):
        noisy = geometric_mechanism(data.counts, sensitivity=2, epsilon=eps_set, rng=rng,
                                    ledger=ledger, statistic=f"set {j + 1}: cell counts")
        share = np.maximum(noisy, 0).astype(float)
        share[share.sum(axis=-1) == 0] = 1.0
        return largest_remainder_round(share, data.n), {}
'''


STUDY = '''
"""A tiny study written only against the harness's contract: the mean of a binary variable."""
import numpy as np

from harness.data import CountBatch
from harness.engine.study import Study
from harness.inference import cell_proportions
from harness.synthesizers import make_synthesizer


class CoinStudy(Study):
    grid_rules = {"n": {"integer": True, "minimum": 2}}

    def generate(self, scenario, rng, n_replicates):
        n = int(scenario["n"])
        ones = rng.binomial(n, 0.3, size=n_replicates)
        return CountBatch(np.stack([n - ones, ones], axis=-1), n)

    def estimands(self, scenario):
        return {"p": 0.3}

    def analyse(self, sets, scenario):
        return cell_proportions(sets.counts[..., 1:], sets.n)

    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = CoinStudy
'''

STUDY_YAML = """name: coin
module: tiny_study
replicates: {paper: 1000, quick: 200, ci: 200}
grid: {n: [50]}
log_epsilon: [0, 2]
epsilon: null
roster:
  Ori: {synthesizer: ori}
  LAP: {synthesizer: laplace_sanitizer, m: 5}
"""

EVALUATION = '''
"""A metric plug-in: the Kolmogorov-Smirnov distance between each released set's category
distribution and the original data's, read from the original batch."""
import numpy as np

from harness.evaluation import MetricEvaluation


def _cdf_distance(original, release, scenario):
    orig = original.train.counts / original.train.n  # (R, K)
    sets = release.sets.counts / release.sets.n  # (R, m, K)
    gap = np.abs(np.cumsum(sets, -1) - np.cumsum(orig, -1)[:, None]).max(-1)
    return {"ks_to_original": gap}  # per set: the engine averages the pooled sets


def ks_to_original():
    return MetricEvaluation("ks_to_original", _cdf_distance, names=("ks_to_original",))
'''


#: One fresh process runs every command of this file, one after another, through
#: ``harness.cli.main`` (what the console entry point calls), each with its own captured stdout,
#: stderr and status, and then reads the fingerprint's plug-in versions: the plug-ins are found
#: the way any user's process finds them (PYTHONPATH, entry points), and the sweeps with
#: ``executor.n_jobs=2`` start worker processes that must find them too. One process instead of
#: one per command: each process paid about 2.5 CPU-s of imports and composition (the file took
#: 55 CPU-s with nine processes and four loky workers).
DRIVER = """
import contextlib, io, json, shutil, sys

from harness import cli

steps, results = json.loads(sys.argv[1]), {}
for name, op, args in steps:
    if op == "copy":  # keep a file an earlier command wrote before a later one replaces it
        shutil.copyfile(*args)
        continue
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(args))
    results[name] = [status, out.getvalue(), err.getvalue()]
from harness.engine.grid import _plugin_version

results["versions"] = [_plugin_version({"synthesizer": "geometric_histogram", "m": 5}),
                       _plugin_version({"synthesizer": "laplace_sanitizer"})]
with open(sys.argv[2], "w") as handle:
    json.dump(results, handle)
"""


class Ran:
    """One command's outcome in the driver process (the fields of subprocess.run's result)."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    install_plugin(root, "tiny-dips-plugin", "geometric_histogram = tiny_plugin:GeometricHistogram",
             "tiny_plugin", PLUGIN)
    install_plugin(root, "broken-dips-plugin", "broken_method = broken_plugin:Missing",
             "broken_plugin", "import numpy\n")
    install_plugin(root, "coin-study", "coin = tiny_study", "tiny_study", STUDY,
             group="dips_harness.studies")
    install_plugin(root, "ks-metric", "ks_to_original = ks_metric:ks_to_original", "ks_metric",
                   EVALUATION, group="dips_harness.evaluations")
    (root / "conf" / "study").mkdir(parents=True)
    (root / "conf" / "study" / "coin.yaml").write_text(STUDY_YAML)
    return root


#: Simulation 1 with the synthesizer plug-in in its roster and the metric plug-in among its
#: evaluations: one sweep (its workers, figures and report) serves both plug-in tests
GEO_SWEEP = ["study=bowen_liu_sim1", "profile=ci", "study.replicates.ci=200", "block_size=100",
             "study.grid.n=[100]", "study.grid.pi=[0.25]", "study.log_epsilon=[0,2]",
             "+study.evaluations.ks_to_original={}"]
FIGURE = Path("bowen_liu_sim1", "ci", "figures", "figure2_main_text_pi.png")


@pytest.fixture(scope="module")
def ran(plugin_path, tmp_path_factory):
    """Every command of the file, run by :data:`DRIVER` in one process (its working directory
    ``cwd``, holding no results/): name -> :class:`Ran`, plus ``cwd`` and ``versions``."""
    cwd = tmp_path_factory.mktemp("runs")
    geo, metrics = cwd / "geo", cwd / "geo" / "bowen_liu_sim1" / "ci" / "metrics.parquet"
    steps = [
        # the sweep with GEO (two workers); its metrics and figure are kept
        ("geo", "cli", ["run", *GEO_SWEEP,
                        "+study.roster.GEO={synthesizer: geometric_histogram, m: 5}",
                        "methods=[Ori,LAP,GEO]", "executor.n_jobs=2", f"out_dir={geo}"]),
        ("", "copy", [str(metrics), str(cwd / "first.parquet")]),
        ("", "copy", [str(geo / FIGURE), str(cwd / "first.png")]),
        # the same command with a methods= subset without GEO's roster entry (one worker)
        ("again", "cli", ["run", *GEO_SWEEP, "methods=[Ori,LAP,MS]", "executor.n_jobs=1",
                          f"out_dir={geo}"]),
        ("list synthesizers", "cli", ["list", "synthesizers"]),
        ("broken", "cli", ["run", "study=bowen_liu_sim1", "profile=ci", "study.grid.n=[40]",
                           "study.grid.pi=[0.1]", "+study.roster.B={synthesizer: broken_method}",
                           "methods=[B]", f"out_dir={cwd / 'broken'}"]),
        ("list studies", "cli", ["list", "studies"]),
        ("coin", "cli", ["run", "study=coin", "profile=ci", "executor.n_jobs=2",
                         f"out_dir={cwd / 'coin'}"]),
        # a bad value in the plug-in's grid is the contract's one-line error
        ("coin bad grid", "cli", ["run", "study=coin", "study.grid.n=[1]",
                                  f"out_dir={cwd / 'coin_bad'}"]),
        ("missing evaluation", "cli", ["run", *GEO_SWEEP, "methods=[Ori,LAP]",
                                       "+study.evaluations.nope={}",
                                       f"out_dir={cwd / 'missing'}"]),
    ]
    proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(steps),
                           str(cwd / "results.json")], cwd=cwd, env=env_with(plugin_path),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads((cwd / "results.json").read_text())
    versions = results.pop("versions")
    return {"cwd": cwd, "versions": versions,
            **{name: Ran(*result) for name, result in results.items()}}


@pytest.fixture(scope="module")
def geo_sweep(ran):
    """The sweep with GEO, then the same command with a methods= subset without it: (first,
    again, out_dir), where first is (its outcome, its metrics, its figure)."""
    cwd = ran["cwd"]
    first = ran["geo"]
    assert first.returncode == 0, first.stdout + first.stderr
    metrics = pd.read_parquet(cwd / "first.parquet")
    return (first, metrics, cwd / "first.png"), ran["again"], cwd / "geo"


def test_a_plugin_synthesizer_runs_in_a_paper_study(ran, geo_sweep):
    listing = ran["list synthesizers"]
    assert listing.returncode == 0, listing.stderr
    lines = {line.split()[0]: line for line in listing.stdout.splitlines()}
    assert "[plug-in tiny-dips-plugin 0.1]" in lines["geometric_histogram"]
    assert "[harness]" in lines["laplace_sanitizer"]
    assert "[broken]" in lines["broken_method"] and "broken-dips-plugin" in lines["broken_method"]

    (_, metrics, figure), again, out = geo_sweep
    geo = metrics[(metrics["method"] == "GEO") & (metrics["metric"] == "bias")]
    assert len(geo) == 2 and geo["value"].notna().all()  # analysed like the paper's methods
    rmse = metrics[metrics["metric"] == "rmse"].set_index(["method", "log_epsilon"])["value"]
    assert rmse[("GEO", 0.0)] > rmse[("GEO", 2.0)]  # more budget, less error
    # the study's figure draws the plug-in beside the paper's methods, in its stable colour
    assert _pixels_of(figure, "GEO") > 20 and _pixels_of(figure, "LAP") > 20
    assert _drawn(metrics) == {"LAP": "#ff7f0e", "GEO": "#a14590", "Ori": "#000000"}

    # a later methods= subset without the plug-in's roster entry keeps it in the sweep's outputs
    assert again.returncode == 0, again.stdout + again.stderr
    after = pd.read_parquet(out / "bowen_liu_sim1" / "ci" / "metrics.parquet")
    assert set(after["method"]) == {"Ori", "MS", "LAP", "GEO"}
    assert _drawn(after) == {"LAP": "#ff7f0e", "GEO": "#a14590", "Ori": "#000000",
                             "MS": "#666666"}
    assert _pixels_of(out / FIGURE, "GEO") > 20


def _drawn(metrics) -> dict[str, str]:
    """Method → colour of the lines of Simulation 1's Figure 2 drawn from ``metrics``."""
    from matplotlib.colors import to_hex

    from experiments.bowen_liu.sim1.figures import FIGURES

    fig = FIGURES["figure2_main_text_pi"](metrics)
    return {line.get_label(): to_hex(line.get_color()) for line in fig.axes[0].get_lines()
            if not line.get_label().startswith("_")}


def _pixels_of(png: Path, method: str) -> int:
    """Pixels of ``png`` in ``method``'s colour (within 2/255 per channel)."""
    import numpy as np
    from matplotlib.colors import to_rgb
    from matplotlib.image import imread

    from harness.plotting import method_colour

    rgb = imread(png)[..., :3]
    return int((np.abs(rgb - np.array(to_rgb(method_colour(method)))) <= 2 / 255)
               .all(axis=-1).sum())


def test_a_broken_plugin_is_one_line_naming_it(ran):
    run = ran["broken"]
    assert run.returncode == 2
    assert len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr
    assert "broken_method" in run.stderr and "broken-dips-plugin" in run.stderr
    assert "cannot be loaded" in run.stderr
    assert not (ran["cwd"] / "broken").exists()


def test_the_plugin_version_enters_the_task_fingerprint(ran):
    plugin, own = ran["versions"]
    assert plugin.startswith("tiny-dips-plugin 0.1+") and len(plugin.split("+")[1]) == 12
    assert own is None  # the harness's own synthesizers are covered by the code version


def test_a_plugin_study_runs_through_the_cli(ran):
    listing = ran["list studies"]
    assert listing.returncode == 0, listing.stderr
    lines = {line.split()[0]: line for line in listing.stdout.splitlines()}
    assert "[plug-in coin-study 0.1]" in lines["coin"] and "[harness]" in lines["bowen_liu_sim1"]
    run = ran["coin"]
    assert run.returncode == 0, run.stdout + run.stderr
    metrics = pd.read_parquet(ran["cwd"] / "coin" / "coin" / "ci" / "metrics.parquet")
    cover = metrics[(metrics["metric"] == "coverage") & (metrics["method"] == "Ori")]
    assert abs(cover["value"].iloc[0] - 0.95) < 4 * 0.016  # Wald CI of p at n = 50, R = 200
    # a bad value in the plug-in's grid is the contract's one-line error
    bad = ran["coin bad grid"]
    assert bad.returncode == 2 and "study.grid.n" in bad.stderr
    assert not (ran["cwd"] / "coin_bad").exists()


def test_a_metric_plugin_runs_in_a_paper_study(ran, geo_sweep):
    """An evaluation from another package, added to Simulation 1 by name: one metric row per
    replicate and method, the original data's own distance is 0, and its version enters the
    tasks' fingerprint (a second run reuses them). The sweep is the synthesizer plug-in's
    (the fixture above); its second run, Ori and LAP again (with MS), reuses their tasks."""
    (first, metrics, _), again, _ = geo_sweep
    ks = metrics[metrics["metric"] == "ks_to_original"].set_index(["method", "epsilon"])
    assert ks.loc["Ori", "value"].iloc[0] == 0.0
    lap = ks.loc["LAP"].sort_index()
    assert (lap["value"] > 0).all() and lap["value"].iloc[0] > lap["value"].iloc[1]  # ε 1 > e²
    assert " 0 already done, 6 run" in first.stdout, first.stdout  # 2 blocks x 3 methods
    assert " 4 already done, 2 run" in again.stdout, again.stdout  # Ori's, LAP's reused
    missing = ran["missing evaluation"]
    assert missing.returncode == 2 and "study.evaluations.nope" in missing.stderr
    assert "ks_to_original" in missing.stderr and not (ran["cwd"] / "missing").exists()
