"""The README's plug-in example (issue 24 item 6): a third-party coded-records synthesizer,
installed as a package with a ``dips_harness.synthesizers`` entry point, enters the benchmark
by its name and runs at profile=ci on studies of three papers (shrunk: first scenario, 3
replicates: what a value and a rank against Monte Carlo error need; the test is about the
plug-in's path into the benchmark, not its numbers), beside each study's reference methods.

The package is "installed" as an installer leaves it: a module and its ``.dist-info`` on the
path, given to the subprocess (and its workers) through PYTHONPATH (as tests/harness/
test_plugins.py does)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[3]

PLUGIN = '''
"""Independent noisy marginals: each column drawn from its Laplace-noised histogram."""
import numpy as np

from harness.data import RecordBatch
from harness.privacy import laplace_mechanism
from harness.synthesizers import SetwiseSynthesizer


class NoisyMarginals(SetwiseSynthesizer):
    """Coded records (input_kind "coded"); ε/(m·p) per column marginal, Δ = 1 (add/remove)."""

    name = "noisy_marginals"
    input_kind = "coded"

    def __init__(self, m: int = 1):
        super().__init__(m)

    def _one_set(self, data, eps_set, ledger, rng, j):
        codes = data.values.astype(np.int64)
        r, n, p = codes.shape
        out = np.empty((r, n, p))
        for c, col in enumerate(data.schema.columns):
            k = len(col.levels)
            counts = np.stack([np.bincount(codes[i, :, c], minlength=k) for i in range(r)])
            noisy = laplace_mechanism(counts, sensitivity=1.0, epsilon=eps_set / p, rng=rng,
                                      ledger=ledger, statistic=f"set {j}: {col.name}")
            prob = np.maximum(noisy, 0.0) + 1e-9
            cum = np.cumsum(prob / prob.sum(-1, keepdims=True), axis=-1)
            u = rng.random((r, n, 1))
            out[..., c] = np.minimum((u > cum[:, None, :]).sum(-1), k - 1)
        return RecordBatch(out, columns=data.columns, schema=data.schema), {}
'''


def test_a_plugin_enters_the_benchmark_on_three_papers(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "tiny_marginals.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "tiny_marginals-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-marginals\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[dips_harness.synthesizers]\nnoisy_marginals = tiny_marginals:NoisyMarginals\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    run = subprocess.run(
        [sys.executable, "-m", "harness.cli", "benchmark", "methods=[noisy_marginals]",
         "profile=ci", "studies=[bowen_liu_sim1,bi_shen_s2,steps_sim]", "replicates=3",
         "scenarios=first", "executor.n_jobs=1", f"out_dir={tmp_path / 'out'}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    board = pd.read_csv(tmp_path / "out" / "benchmark" / "ci-r3-first" / "leaderboard.csv")
    mine = board[board.method == "noisy_marginals"]
    assert set(mine.study) == {"bowen_liu_sim1", "bi_shen_s2", "steps_sim"}
    assert set(mine.paper) == {"bowen_liu", "bi_shen", "steps"}
    assert mine["value"].notna().all() and mine["rank"].notna().any()
    assert set(mine.relation) == {"add/remove"}
    # beside each study's reference methods, on the same cells
    assert {"Ori", "MODIPS"} <= set(board[board.study == "bowen_liu_sim1"].method)
    scores = pd.read_csv(tmp_path / "out" / "benchmark" / "ci-r3-first" / "scores.csv")
    assert scores.set_index("method").loc["noisy_marginals", "studies"] == 3
