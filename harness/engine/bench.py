"""``harness bench``: throughput of the vectorised engine, of the study's plain per-replicate loop,
and the wall time of the configured sweep.

In one run, for the configured study and profile:

1. per method, the vectorised throughput: ``run_task`` in this process with BLAS threads limited
   to 1, one block of ``block_size`` replicates per scenario of the grid (a replicate includes the
   whole ε grid of a private method), timed with ``time.perf_counter``; the plain-loop throughput
   of ``study.loop_oracle()`` over the same scenarios and ε grid, with as many rounds (one
   replicate per scenario each) as fit in about ``loop_seconds``; and the speed-up
   vectorised / loop (NaN when the study has no loop oracle);
2. the wall time of the complete sweep (all scenarios, replicates, ε and methods) with the
   configured executor (``executor=local`` or ``executor=dask``; the wall time includes starting
   a dask LocalCluster), run into a fresh temporary ``out_dir`` so that nothing is skipped; or,
   with ``--keep``, into the configured sweep directory, which must then hold none of this
   code's tasks (refused otherwise, before anything runs): the timed sweep is then also the
   sweep that ``harness report`` collects, so a paper-scale study need not be run twice.

``--sweep-only`` skips step 1 (its columns are NaN): the per-method timing runs one block per
scenario and method in one process before the sweep, which for a costly study is as long as
the sweep itself, and a quiet machine is the scarce resource when a paper's studies are benched
for its report.

The table is printed and written to ``<sweep dir>/bench.csv``.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import tempfile
import time

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from .. import rng as rng_mod
from ..errors import ConfigError
from .aggregate import MetricsStream
from .executor import describe as describe_executor
from .executor import n_workers as executor_n_workers
from .grid import Task, expand_grid, plan_tasks
from .store import SweepStore, atomic_write_csv
from .study import load_study
from .sweep import code_version, run_sweep, study_module, sweep_dir
from .task import run_task

#: columns printed by ``harness bench`` (bench.csv has every column)
SHOWN = {
    "method": "method",
    "n_eps": "ε",
    "m": "m",
    "vec_replicates": "vec reps",
    "vec_seconds": "vec s",
    "vec_reps_per_s": "vec reps/s",
    "loop_replicates": "loop reps",
    "loop_seconds": "loop s",
    "loop_reps_per_s": "loop reps/s",
    "speedup": "speed-up",
}


#: the per-method columns of bench.csv (NaN with ``--sweep-only``)
THROUGHPUT_COLUMNS = ["method", "private", "n_eps", "m", "vec_replicates", "vec_seconds",
                      "vec_reps_per_s", "loop_replicates", "loop_seconds", "loop_reps_per_s",
                      "speedup"]


def cores(config: dict) -> int:
    """Worker processes of the configured executor (joblib: −1 = all cores, −2 = all but one;
    dask: the LocalCluster's workers, 0 when joining an existing cluster of unknown size)."""
    executor = config["executor"]
    if executor.get("name", "local") != "local":
        return executor_n_workers(executor) or 0
    n_jobs = int(executor.get("n_jobs", -1))
    total = os.cpu_count() or 1
    return max(1, total + 1 + n_jobs) if n_jobs < 0 else n_jobs


def _task(study, scenario: dict, label: str, n_replicates: int) -> Task:
    return Task(study.name, tuple(scenario.items()), 0, n_replicates, n_replicates, label, "bench")


def time_vectorised(study, config: dict, label: str, scenarios: list[dict]) -> tuple[int, float]:
    """Replicates and seconds of one block per scenario: ``block_size`` replicates, or the
    profile's replicate count when smaller (a sweep never runs a larger block; a study with
    large data sets ran out of memory timing 500 replicates of a 20-replicate profile)."""
    block = min(int(config["block_size"]), int(config["n_replicates"]))
    run_task(study, _task(study, scenarios[0], label, min(block, 8)), config)  # warm-up
    seconds = 0.0
    for scenario in scenarios:
        task = _task(study, scenario, label, block)
        t0 = time.perf_counter()
        run_task(study, task, config)
        seconds += time.perf_counter() - t0
    return block * len(scenarios), seconds


def time_loop(study, config: dict, label: str, scenarios: list[dict], epsilons: list,
              target_seconds: float) -> tuple[int, float]:
    """Replicates and seconds of the plain loop: rounds of one replicate per scenario (each over
    the whole ε grid) until ``target_seconds`` have passed (at least one round)."""
    oracle = study.loop_oracle()
    rng = rng_mod.generator(int(config["seed"]), study.name, "bench", "loop", label)
    oracle(scenarios[0], label, epsilons[0], rng, study.config)  # warm-up
    rounds, seconds = 0, 0.0
    while rounds == 0 or seconds < target_seconds:
        t0 = time.perf_counter()
        for scenario in scenarios:
            for eps in epsilons:
                oracle(scenario, label, eps, rng, study.config)
        seconds += time.perf_counter() - t0
        rounds += 1
    return rounds * len(scenarios), seconds


def check_keep(config: dict) -> None:
    """``--keep`` needs a sweep directory with none of this code's tasks done (else the timed
    sweep would skip them): a one-line ConfigError naming the directory otherwise."""
    tasks = plan_tasks(load_study(config["study"]), config, code_version(study_module(config)))
    store = SweepStore(sweep_dir(config))
    done = sum(store.state(t).done for t in tasks)
    if done:
        raise ConfigError(f"bench --keep: {sweep_dir(config)} already holds {done} of the "
                          f"{len(tasks)} tasks of this code; remove them or bench without --keep")


def time_sweep(config: dict, report=None, keep: bool = False) -> dict:
    """Wall time of the complete sweep with the configured executor, into a fresh out_dir, and
    of what the command does after it (``report(config)``: aggregate, tables, figures, claims;
    its output is silenced), so that the whole command a user waits for is measured. The sweep's
    time includes the aggregation done in this process while the workers compute (as in
    ``harness run``). With ``keep`` the sweep runs into the configured out_dir (see
    :func:`check_keep`) and its report into the sweep directory, as ``harness run`` writes it."""
    with (contextlib.nullcontext(config["out_dir"]) if keep
          else tempfile.TemporaryDirectory(prefix="harness-bench-")) as tmp:
        cfg = dict(config, out_dir=tmp) if keep else dict(config, out_dir=tmp, figures_dir=None)
        t0 = time.perf_counter()
        # as the command does: metrics aggregated in this process while the workers compute
        stream = MetricsStream(cfg) if report is not None else None
        summary = run_sweep(cfg, progress=False, listener=stream)
        seconds = time.perf_counter() - t0
        report_seconds = math.nan
        if report is not None and not summary.failed:
            t1 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                report(cfg, stream)
            report_seconds = time.perf_counter() - t1
    if summary.failed:
        first = summary.failed[0]
        raise RuntimeError(
            f"bench sweep: {len(summary.failed)} task(s) failed, e.g. {first['key']}: "
            f"{first['error']}"
        )
    if summary.skipped:
        raise RuntimeError(f"bench sweep: {summary.skipped} task(s) were skipped in a fresh dir")
    return {"seconds": seconds, "tasks": summary.n_tasks, "report_seconds": report_seconds}


def run_bench(config: dict, *, loop_seconds: float = 0.5, sweep: bool = True,
              report=None, keep: bool = False, throughput: bool = True) -> pd.DataFrame:
    """Benchmark the configured study and profile; print the table and write bench.csv
    (``keep``: the timed sweep's results stay in the sweep directory, see :func:`check_keep`;
    ``throughput=False``: only the sweep is timed, the per-method columns are NaN)."""
    if not (sweep or throughput):
        raise ValueError("run_bench: nothing to time (sweep=False and throughput=False)")
    if keep and sweep:
        check_keep(config)
    study = load_study(config["study"])
    scenarios = expand_grid(study.grid_axes())
    methods = list(config["methods"])
    n_rep = int(config["n_replicates"])
    n_cores = cores(config)
    has_loop = study.loop_oracle() is not None

    records = []
    with threadpool_limits(limits=1):
        for label in methods:
            synth = study.synthesizer(label, scenarios[0])
            epsilons = study.epsilons() if synth.private else [None]
            if not throughput:
                records.append({"method": label, "private": bool(synth.private),
                                "n_eps": len(epsilons), "m": int(synth.m)})
                continue
            vec_reps, vec_s = time_vectorised(study, config, label, scenarios)
            if has_loop:
                loop_reps, loop_s = time_loop(study, config, label, scenarios, epsilons,
                                              loop_seconds)
            else:
                loop_reps, loop_s = 0, math.nan
            vec_rate = vec_reps / vec_s
            loop_rate = loop_reps / loop_s if has_loop else math.nan
            records.append({
                "method": label,
                "private": bool(synth.private),
                "n_eps": len(epsilons),
                "m": int(synth.m),
                "vec_replicates": vec_reps,
                "vec_seconds": vec_s,
                "vec_reps_per_s": vec_rate,
                "loop_replicates": loop_reps if has_loop else np.nan,
                "loop_seconds": loop_s,
                "loop_reps_per_s": loop_rate,
                "speedup": vec_rate / loop_rate if has_loop else math.nan,
            })
    table = pd.DataFrame.from_records(records).reindex(columns=THROUGHPUT_COLUMNS)

    total_reps = len(scenarios) * n_rep * len(methods)
    sweep_info = (time_sweep(config, report, keep) if sweep
                  else {"seconds": math.nan, "tasks": 0, "report_seconds": math.nan})
    table["sweep_seconds"] = sweep_info["seconds"]
    table["report_seconds"] = sweep_info["report_seconds"]
    command = sweep_info["seconds"] + sweep_info["report_seconds"]
    table["command_over_sweep"] = command / sweep_info["seconds"]
    table["sweep_replicates"] = total_reps
    table["sweep_reps_per_s"] = total_reps / sweep_info["seconds"]
    table["cores"] = n_cores
    table.attrs.update(study=study.name, profile=config["profile"]["name"], cores=n_cores,
                       sweep_seconds=sweep_info["seconds"], sweep_replicates=total_reps)

    print(
        f"bench: study={study.name} profile={config['profile']['name']} "
        f"replicates={n_rep} per scenario x {len(scenarios)} scenarios, "
        f"block_size={config['block_size']}, cores={n_cores} "
        f"(vectorised and loop: 1 process, 1 BLAS thread)"
    )
    print(_format(table))
    if sweep:
        print(
            f"full sweep: {sweep_info['seconds']:.1f} s wall on {n_cores} core(s), "
            f"{sweep_info['tasks']} tasks, {total_reps} replicates x methods "
            f"({total_reps / sweep_info['seconds']:.0f} replicates/s), "
            f"executor={describe_executor(config['executor'])}"
        )
        if report is not None:
            print(f"whole command: {command:.1f} s = sweep {sweep_info['seconds']:.1f} s + "
                  f"report {sweep_info['report_seconds']:.1f} s (aggregate, tables, figures, "
                  f"claims): {command / sweep_info['seconds']:.2f}x the sweep")
    out = sweep_dir(config) / "bench.csv"
    atomic_write_csv(table, out)
    print(f"bench:   {out}")
    return table


def _format(table: pd.DataFrame) -> str:
    shown = table[list(SHOWN)].rename(columns=SHOWN)
    fmt = {
        "vec s": "{:.3f}".format, "loop s": "{:.3f}".format,
        "vec reps/s": "{:,.0f}".format, "loop reps/s": "{:,.1f}".format,
        "speed-up": "{:,.0f}x".format,
    }
    for col, f in fmt.items():
        shown[col] = [("nan" if not np.isfinite(v) else f(v)) for v in shown[col]]
    return shown.to_string(index=False)
