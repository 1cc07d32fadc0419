"""``harness bench --release=<methods>``: what one release of a benchmarked synthesizer costs on a
study's workload (issue 24: MST and AIM's first and steady-state seconds, and a task of R
replicates released as one vectorised call against a loop of R single-replicate releases).

For each named method (a name of ``conf/benchmark.yaml`` or a coded-records synthesizer), on the
study's first scenario and the middle value of its privacy grid, wrapped by the benchmark's
``tabular`` adapter exactly as ``harness benchmark`` runs it (the study's data interface,
relation and δ), in this process:

* ``first_s``: the first release of one replicate (an extra one, the R + 1st; for a JAX method
  compilation included: run the command in a fresh process, which ``harness bench`` is);
* ``steady_s``: the mean seconds of R further single-replicate releases (``loop_task_s`` their
  sum: the task as a loop);
* ``batched_first_s``: the first release of all R replicates at once (a JAX method compiles
  for the new batch size), then ``batched_task_s``: a second one, timed (its steady state);
* ``loop_over_batched``: loop_task_s / batched_task_s (> 1: the vectorised task is faster).

Every release draws from the method's own stream of the first block (``harness.rng``), so the
releases are the ones a sweep makes. The original data of the R replicates come from the
study's data stream of block 0.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from .. import rng as rng_mod
from ..data import Original
from ..engine.grid import expand_grid, scenario_key
from ..engine.study import load_study
from ..errors import ConfigError
from ..report import ROOT

COLUMNS = ("method", "study", "scenario", "privacy", "replicates", "first_s", "steady_s",
           "loop_task_s", "batched_first_s", "batched_task_s", "loop_over_batched")


def bench_release(cfg: dict, methods: list[str], replicates: int) -> pd.DataFrame:
    """One row per method of :data:`COLUMNS` (see the module docstring)."""
    from .command import ADAPTER, _accepts, method_specs

    if replicates < 1:
        raise ConfigError(f"--replicates: must be an integer >= 1, got {replicates}")
    study_cfg = dict(cfg["study"])
    bench = study_cfg.get("benchmark") or {}
    if not bench.get("interface") and not bench.get("reference"):
        raise ConfigError(f"study: {study_cfg['name']} declares no benchmark data interface "
                          f"(conf/study/{study_cfg['name']}.yaml: benchmark)")
    specs = method_specs()
    roster = dict(study_cfg["roster"])
    for name in methods:
        spec = specs.get(name, {"synthesizer": name})
        why = _accepts(spec)
        if why:
            raise ConfigError(f"--release: {name}: {why}")
        roster[name] = {"synthesizer": ADAPTER, "inner": spec,
                        "interface": dict(bench.get("interface") or {})}
    study = load_study({**study_cfg, "roster": roster})
    scenario = expand_grid(study_cfg["grid"])[0]
    skey = scenario_key(scenario)
    seed = cfg["seed"]
    original = Original.of(study.generate(
        scenario, rng_mod.data_stream(seed, study.name, skey, 0), replicates + 1))
    train = original.train
    values = list(study.privacy_values())
    value = values[len(values) // 2]
    rows = []
    for name in methods:
        synth = study.synthesizer(name, scenario)
        streams = (seed, study.name, skey, 0, name)
        first = _timed_release(synth, train.replicates(slice(replicates, None)), value, streams)
        loop = [_timed_release(synth, train.replicates(slice(i, i + 1)), value, streams)
                for i in range(replicates)]
        block = train.replicates(slice(0, replicates))
        batched_first = _timed_release(synth, block, value, streams)
        batched = _timed_release(synth, block, value, streams)
        rows.append({"method": name, "study": study.name, "scenario": skey,
                     "privacy": value, "replicates": replicates, "first_s": first,
                     "steady_s": float(np.mean(loop)), "loop_task_s": float(np.sum(loop)),
                     "batched_first_s": batched_first, "batched_task_s": batched,
                     "loop_over_batched": float(np.sum(loop)) / batched})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _timed_release(synth, batch, value, streams: tuple) -> float:
    """Seconds of one ``release`` of ``batch`` at privacy ``value`` from the method's streams
    (``streams``: seed, study, scenario key, block, label); its ε-free ``prepare`` (the
    records' encoding) runs first, untimed."""
    seed, study, skey, block, label = streams
    prepared = synth.prepare(batch, rng_mod.prepare_stream(seed, study, skey, block, label))
    stream = rng_mod.method_stream(seed, study, skey, block, label, value)
    start = time.perf_counter()
    synth.release(batch, value, stream, prepared=prepared)
    return time.perf_counter() - start


def write_release_bench(table: pd.DataFrame, out: Path) -> Path:
    """Merge ``table`` into ``out/release_bench.csv``: rows of the same (method, study) are
    replaced, others kept, so benches of several studies accumulate."""
    from ..engine.store import atomic_write_csv

    path = out / "release_bench.csv"
    if path.exists() and path.stat().st_size:
        old = pd.read_csv(path)
        keep = ~old.set_index(["method", "study"]).index.isin(
            table.set_index(["method", "study"]).index)
        table = pd.concat([old[keep], table], ignore_index=True)
    table = table.sort_values(["study", "method"], kind="stable").reset_index(drop=True)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_csv(table, path)
    return path


def run_release_bench(cfg: dict, methods: list[str], replicates: int,
                      collect: str | None = None, root: Path = ROOT) -> pd.DataFrame:
    """``harness bench --release=...``: bench, print, write
    ``<out_dir>/benchmark/<profile>/release_bench.csv`` and, with ``collect``, copy it to
    ``results/reference/benchmark/<collect>/`` (``harness report benchmark=<collect>`` shows
    it)."""
    import shutil

    table = bench_release(cfg, methods, replicates)
    print(table.to_string(index=False, float_format=lambda x: format(x, ".3g")))
    out = Path(cfg["out_dir"]) / "benchmark" / cfg["profile"]["name"]
    path = write_release_bench(table, out)
    print(f"release bench: {path}")
    if collect:
        dest = root / "results" / "reference" / "benchmark" / collect
        if not (dest / "leaderboard.csv").exists():
            raise ConfigError(f"--collect: no committed benchmark {collect!r} under "
                              f"{dest.parent} (collect the benchmark first)")
        shutil.copyfile(path, dest / "release_bench.csv")
        print(f"collected: {dest / 'release_bench.csv'}")
    return table
