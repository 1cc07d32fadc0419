"""Cost of MST (or AIM) here and of MST in OpenDP (``opendp.extras.mbi.MST``) on the same data,
in one run:
per-release seconds of the first call (JAX compilation included) and in steady state, a task
of R replicates as one vectorised release vs a loop of R releases, and the mean two-way TVD
of the synthetic data of each (equal error).

``python tests/harness/synthesizers/pgm_bench.py [replicates] [opendp_releases] [mst|aim]`` prints a
JSON record. Run it in a fresh process: "first call" means the first in the process. AIM is
timed on our side only (OpenDP's AIM on the same data is not run: one release takes minutes;
``opendp_aim`` records the AIM reference of ``make_pgm_reference.py`` on smaller data).

OpenDP 0.16 is written for mbi 1.1; with mbi 2 it needs ``Domain.attrs`` (added here, for
this comparison only) and an estimator (mbi 2's MirrorDescent, 1000 iterations, mbi 1.1's
``mirror_descent`` default); its AIM also needs ``MarkovRandomField.cliques`` as a list (it
appends a list to it; added here too). OpenDP draws its noise from the operating system, and mbi's
sampler reads numpy's global generator, which this tool (not the harness: it lives with the
tests) seeds per release.
"""

from __future__ import annotations

import json
import sys
import time
from itertools import combinations

import numpy as np


def bench_data(r: int, n: int = 4000, d: int = 5, levels: int = 4, seed: int = 0):
    """R data sets (R, n, d) of codes: each column copies a shared latent level with
    probability 1/2, else uniform (every pair dependent)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, levels, (r, n, 1))
    return np.where(rng.random((r, n, d)) < 0.5, base, rng.integers(0, levels, (r, n, d)))


def two_way_tvd(synthetic: np.ndarray, codes: np.ndarray, levels: int) -> float:
    """Mean over column pairs of the TVD between two-way tables of (n, d) code arrays
    (codes ≥ levels, e.g. OpenDP's null, count as their own cells)."""
    width = levels + 1
    out = []
    for a, b in combinations(range(codes.shape[1]), 2):
        x = np.bincount(codes[:, a] * width + codes[:, b], minlength=width ** 2)
        y = np.bincount(synthetic[:, a] * width + synthetic[:, b], minlength=width ** 2)
        out.append(0.5 * np.abs(x / x.sum() - y / y.sum()).sum())
    return float(np.mean(out))


def opendp_release(codes: np.ndarray, levels: int, rho: float, algorithm,
                   rows: int | None = None):
    """One OpenDP contingency-table release of ``codes`` (n, d) at ρ by ``algorithm`` (a
    function of OpenDP's estimator returning a ``dp.mbi`` algorithm): (model, marginals,
    synthetic codes (rows, d) drawn by mbi's sampler, whose randomness is numpy's global
    state)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import mbi
    import opendp.prelude as dp
    import polars as pl
    from mbi.estimation import MirrorDescent

    if not hasattr(mbi.Domain, "attrs"):
        mbi.Domain.attrs = property(lambda self: self.attributes)
    if not isinstance(mbi.MarkovRandomField.cliques, list):  # AIM appends a list to it
        mbi.MarkovRandomField.cliques = property(lambda self: list(self.potentials.cliques))
    dp.enable_features("contrib")

    def estimator(domain, loss_fn, *, potentials=None):
        return MirrorDescent().estimate(domain, loss_fn, warm_start=potentials, iters=1000)

    names = [f"c{j}" for j in range(codes.shape[1])]
    frame = pl.DataFrame({c: codes[:, j] for j, c in enumerate(names)})
    ctx = dp.Context.compositor(data=frame.lazy(), privacy_unit=dp.unit_of(contributions=1),
                                privacy_loss=dp.loss_of(rho=rho), split_evenly_over=1)
    table = ctx.query().select(*names).contingency_table(
        keys={c: list(range(levels)) for c in names}, algorithm=algorithm(dp, estimator)
    ).release()
    synth = table.model.synthetic_data(rows or codes.shape[0], "sample").to_dict()
    synthetic = np.stack([np.asarray(synth[c]) for c in names], axis=1).astype(np.int64)
    return table.model, table.marginals, synthetic


def opendp_mst(codes: np.ndarray, levels: int, rho: float, oneway_split=None,
               measure_split=0.9, rows: int | None = None):
    """One OpenDP MST release (:func:`opendp_release`)."""
    return opendp_release(codes, levels, rho, lambda dp, est: dp.mbi.MST(
        estimator=est, oneway_split=oneway_split, measure_split=measure_split), rows)


def opendp_aim(codes: np.ndarray, levels: int, rho: float, degree=3, rounds=None,
               max_size=80.0, measure_split=0.9, oneway_split=None,
               rows: int | None = None):
    """One OpenDP AIM release (:func:`opendp_release`): workload all ``degree``-way
    marginals, ``rounds`` T (None: 16d), ``max_size`` MB, after OpenDP's one-way marginals on
    ``oneway_split`` of ρ (None: half)."""
    return opendp_release(codes, levels, rho, lambda dp, est: dp.mbi.AIM(
        estimator=est, queries=degree, rounds=rounds, max_size=max_size,
        measure_split=measure_split, oneway_split=oneway_split), rows)


def bench(replicates: int = 100, opendp_releases: int = 3, method: str = "mst",
          epsilon: float = 1.0, delta: float = 1e-5, levels: int = 4) -> dict:
    """Seconds per release of ours (first call, steady state, batched task vs loop) and of
    OpenDP's (first, steady), with the mean two-way TVD of each."""
    from harness.data import RecordBatch
    from harness.privacy import zcdp_rho
    from harness.schema import Categorical, Schema
    from harness.synthesizers import make_synthesizer

    codes = bench_data(replicates, levels=levels)
    d = codes.shape[2]
    schema = Schema(tuple(Categorical(f"c{j}", tuple(range(levels))) for j in range(d)))

    def batch(x):
        return RecordBatch(x.astype(float), columns=schema.names, schema=schema)

    # OpenDP's split (half of ρ on the one-way marginals, 90 % of the rest measuring), so
    # that the errors compare
    synth = (make_synthesizer("mst", delta=delta, oneway_split=0.5, measure_split=0.9)
             if method == "mst" else make_synthesizer(method, delta=delta))
    out: dict = {"method": method, "n": int(codes.shape[1]), "columns": d, "levels": levels,
                 "epsilon": epsilon,
                 "delta": delta, "rho": zcdp_rho(epsilon, delta), "replicates": replicates}
    start = time.perf_counter()
    synth.release(batch(codes[:1]), epsilon, np.random.default_rng(0))
    out["ours_first_s"] = time.perf_counter() - start
    start = time.perf_counter()
    loop = [synth.release(batch(codes[i:i + 1]), epsilon, np.random.default_rng(i))
            for i in range(replicates)]
    out["ours_loop_task_s"] = time.perf_counter() - start
    out["ours_steady_per_release_s"] = out["ours_loop_task_s"] / replicates
    synth.release(batch(codes), epsilon, np.random.default_rng(1))  # compile batch size R
    start = time.perf_counter()
    rel = synth.release(batch(codes), epsilon, np.random.default_rng(2))
    out["ours_batched_task_s"] = time.perf_counter() - start
    out["ours_batched_per_replicate_s"] = out["ours_batched_task_s"] / replicates
    out["batched_speedup_over_loop"] = out["ours_loop_task_s"] / out["ours_batched_task_s"]
    values = rel.sets.values[:, 0].astype(np.int64)
    out["ours_tvd"] = float(np.mean([two_way_tvd(values[i], codes[i], levels)
                                     for i in range(replicates)]))
    out["ours_loop_tvd"] = float(np.mean([two_way_tvd(r.sets.values[0, 0].astype(np.int64),
                                                      codes[i], levels)
                                          for i, r in enumerate(loop)]))
    if method != "mst":
        return out
    try:
        import opendp  # noqa: F401
    except ImportError:
        return out
    seconds, tvds = [], []
    for i in range(opendp_releases):
        np.random.seed(i)  # noqa: NPY002  (mbi's sampler)
        start = time.perf_counter()
        _, _, synthetic = opendp_mst(codes[i], levels, out["rho"], oneway_split=0.5)
        seconds.append(time.perf_counter() - start)
        tvds.append(two_way_tvd(synthetic, codes[i], levels))
    out["opendp_first_s"] = seconds[0]
    out["opendp_steady_per_release_s"] = float(np.mean(seconds[1:])) if len(seconds) > 1 \
        else None
    out["opendp_tvd"] = float(np.mean(tvds))
    if out["opendp_steady_per_release_s"]:
        out["speedup_steady_loop"] = (out["opendp_steady_per_release_s"]
                                      / out["ours_steady_per_release_s"])
        out["speedup_steady_batched"] = (out["opendp_steady_per_release_s"]
                                         / out["ours_batched_per_replicate_s"])
    return out


if __name__ == "__main__":
    args = [int(a) if a.isdigit() else a for a in sys.argv[1:]]
    print(json.dumps(bench(*args), indent=1))
