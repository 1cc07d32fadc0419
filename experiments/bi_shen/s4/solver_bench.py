"""S4's glasso solver, before and after the speed-up of issue 25, benched in one run (report,
appendix "S4: cost, speed-up and the ci profile").

The same sweep, S4 at ``profile=reduced`` (every scenario, method and ε; the seeds of DESIGN §5,
so both solvers fit the same releases with the same folds), is run twice by ``harness bench``'s
sweep timer (:func:`harness.engine.bench.run_bench`, ``throughput=False``), one solver after
the other on the same machine:

- ``former``: ``study.glasso.screen=false, study.glasso.balance_ratio=10``, the solver before the
  speed-up (no exact covariance screening, μ balanced at Boyd et al.'s residual ratio 10), bit
  for bit (``tests/harness/inference/test_glasso.py``);
- ``current``: the study's configured solver (screening on, ratio
  :data:`harness.inference.glasso.BALANCE_RATIO`).

Table ``solver_bench``: per solver, the sweep's wall seconds (``harness bench``'s timer), the
summed CPU seconds of its tasks (``timings.jsonl``: each task's process CPU time) and per
replicate, and the former's over the current's (the speed-up). Table ``solver_methods``: the
same CPU seconds per method. Table ``solver_agreement``: per network and method, the fits
both solvers made, how many are bit-identical, the largest relative difference of the entropy
loss, how many moved by more than :data:`MOVED`, and how many converged under each. The
objective is the same and strictly convex, so the two solvers' estimates differ only within the
ADMM's stopping rule; but a cross-validation whose two best penalties have CV losses tied
within that slack may choose the other one, and the refit's loss then moves by far more."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd

from harness import config
from harness.engine.bench import run_bench
from harness.engine.sweep import sweep_dir
from harness.inference.glasso import BALANCE_RATIO
from harness.report import sweep_timings

from ..tables import tidy

NAME = "bi_shen_s4_solver_bench"
SETTINGS = {
    "study": "bi_shen_s4", "profile": "reduced", "n_jobs": 2,
    # the solver before issue 25's speed-up, then the configured one
    "solvers": {"former": {"screen": False, "balance_ratio": 10.0}, "current": {}},
    "overrides": (),  # more command-line overrides of both sweeps (the tests' small grid)
}
KEYS = ["network", "method", "epsilon", "replicate"]
#: [ours] an entropy loss that moves by more than this share between the solvers is counted
#: apart: the ADMM's relative tolerance 1e-4 moves the losses by thousandths, so a larger move
#: is the CV choosing another penalty (two penalties' CV losses tied within that slack)
MOVED = 0.01


def _config(settings, solver: dict, out_dir: str) -> dict:
    overrides = [f"+study.glasso.{k}={json.dumps(v)}" for k, v in solver.items()]
    return config.load([f"study={settings['study']}", f"profile={settings['profile']}",
                        f"executor.n_jobs={int(settings['n_jobs'])}", f"out_dir={out_dir}",
                        *settings.get("overrides", ()), *overrides])


def _metrics(root: Path) -> pd.DataFrame:
    """Entropy loss and convergence per fit (network, method, ε, replicate) of the sweep."""
    frame = pd.concat(pd.read_parquet(f) for f in sorted((root / "replicate_metrics")
                                                         .glob("*.parquet")))
    frame = frame[frame["metric"].isin(["entropy_loss", "glasso_converged"])]
    frame["epsilon"] = frame["epsilon"].fillna(0.0)  # NP has no ε
    return frame.pivot_table(index=KEYS, columns="metric", values="value", aggfunc="first")


def bench_solver(settings, label: str, solver: dict, log) -> tuple[dict, pd.DataFrame,
                                                                    pd.DataFrame]:
    """One solver's bench: its ``solver_bench`` row, task seconds and per-fit metrics."""
    with tempfile.TemporaryDirectory(prefix="harness-solver-bench-") as tmp:
        cfg = _config(settings, solver, tmp)
        log(f"{NAME}: {label} solver {solver or '(configured)'}: timing the sweep")
        table = run_bench(cfg, sweep=True, throughput=False, keep=True)
        root = sweep_dir(cfg)
        # per method: tasks and CPU seconds (the last record of each task, as the report reads)
        tasks, metrics = sweep_timings(cfg), _metrics(root)
    replicates = int(cfg["n_replicates"])
    glasso = cfg["study"]["glasso"]  # the solver's settings as the study reads them
    row = {"solver": label, "screen": bool(glasso.get("screen", True)),
           "balance_ratio": float(glasso.get("balance_ratio") or BALANCE_RATIO),
           "tasks": int(tasks["tasks"].sum()), "replicates": replicates,
           "sweep_seconds": float(table["sweep_seconds"].iloc[0]),
           "task_cpu_seconds": float(tasks["task_cpu_seconds"].sum()),
           "cores": int(table["cores"].iloc[0])}
    row["cpu_seconds_per_replicate"] = row["task_cpu_seconds"] / replicates
    return row, tasks, metrics


def agreement(former: pd.DataFrame, current: pd.DataFrame) -> pd.DataFrame:
    """Per network and method: fits of both solvers, bit-identical ones, the largest relative
    entropy-loss difference, converged fits of each."""
    both = former.add_suffix("_former").join(current.add_suffix("_current"), how="inner")
    a, b = both["entropy_loss_former"], both["entropy_loss_current"]
    relative = (b - a).abs() / a.abs()
    both = both.assign(identical=(a == b), relative=relative, moved=relative > MOVED)
    return (both.groupby(["network", "method"], sort=False)
            .agg(fits=("identical", "size"), identical=("identical", "sum"),
                 max_relative_difference=("relative", "max"), moved=("moved", "sum"),
                 converged_former=("glasso_converged_former", "sum"),
                 converged_current=("glasso_converged_current", "sum"))
            .reset_index())


def make_tables(settings=SETTINGS, log=print) -> dict[str, pd.DataFrame]:
    """The three tables of the module docstring; floats to 5 significant digits."""
    rows, tasks, metrics = [], [], {}
    for label, solver in settings["solvers"].items():
        row, seconds, fits = bench_solver(settings, label, dict(solver), log)
        rows.append(row)
        tasks.append(seconds)
        metrics[label] = fits
    bench = pd.DataFrame(rows)
    before = bench.iloc[0]
    bench["speedup_wall"] = before["sweep_seconds"] / bench["sweep_seconds"]
    bench["speedup_cpu"] = before["cpu_seconds_per_replicate"] / bench["cpu_seconds_per_replicate"]
    methods = pd.DataFrame({label: t.set_index("method")["task_cpu_seconds"]
                            for label, t in zip(settings["solvers"], tasks, strict=True)})
    methods = methods.rename_axis("method").reset_index()
    first, last = list(settings["solvers"])[0], list(settings["solvers"])[-1]
    methods["speedup_cpu"] = methods[first] / methods[last]
    return {"solver_bench": tidy(bench), "solver_methods": tidy(methods),
            "solver_agreement": tidy(agreement(metrics[first], metrics[last]))}


def main() -> None:  # pragma: no cover - a command
    for name, table in make_tables().items():
        print(f"\n{name}\n{table.to_string(index=False)}")


if __name__ == "__main__":  # pragma: no cover
    main()
