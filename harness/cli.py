"""Command line: ``harness [SUBCOMMAND] [key=value ...]`` (DESIGN §7).

Sub-commands: run (default), aggregate, plot, table, claims, report, list, replay, bench,
check. Overrides are
Hydra 1.3 overrides of ``conf/config.yaml`` (e.g. ``study=<name> profile=paper
executor.n_jobs=2``). Invalid input prints one line naming the key and the allowed values and
exits with status 2 before anything is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .errors import ConfigError, allowed, one_line

SUBCOMMANDS = (
    "run", "aggregate", "plot", "table", "claims", "report", "list", "replay", "bench", "check"
)
USAGE = (
    "usage: harness [run|aggregate|plot|table|claims|report|list|replay|bench|check] "
    "[key=value ...]\n"
    "       harness report paper=<paper> [--render-only] [--studies=a,b] [key=value ...]\n"
    "       harness check [--mode statistical|exact] [--update] [--alpha A] "
    "[--reference-dir DIR] [key=value ...]\n"
    "       harness -m [run] key=a,b [key=value ...] [hydra/launcher=slurm]   (config variants)\n"
    "       harness replay '<task key>' [key=value ...]\n"
    "       harness list [studies|methods|estimands] [key=value ...]"
)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    multirun = [a for a in argv if a in ("-m", "--multirun")]
    argv = [a for a in argv if a not in ("-m", "--multirun")]
    command = "run"
    if argv and "=" not in argv[0] and "/" not in argv[0]:
        command = argv.pop(0)
    try:
        if command not in SUBCOMMANDS:
            raise ConfigError(
                f"command: {command!r} is not allowed (allowed: {', '.join(SUBCOMMANDS)})"
            )
        if multirun:
            if command != "run":
                raise ConfigError(f"{multirun[0]}: only run sweeps config variants, "
                                  f"not {command!r} (allowed: run)")
            from .multirun import run_variants

            return run_variants(argv)
        return COMMANDS[command](argv)
    except ConfigError as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # a directory that cannot be written, a disk that is full, ...
        where = f" {exc.filename}" if exc.filename else ""
        print(f"error: cannot write{where} ({exc.strerror or type(exc).__name__}); give another "
              f"out_dir, or free the path", file=sys.stderr)
        return 2


def _is_positional(arg: str) -> bool:
    """A task key such as ``study/n=40,pi=0.1/block=0/LAP`` has a '/' before its first '=';
    an override (``out_dir=/tmp/x``) has none."""
    return "=" not in arg or arg.startswith(("'", '"')) or "/" in arg.split("=", 1)[0]


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    positional = [a for a in argv if _is_positional(a)]
    overrides = [a for a in argv if a not in positional]
    return positional, overrides


def _config(overrides: list[str]) -> dict:
    from . import config

    return config.load(overrides)


def _no_positional(argv: list[str], command: str) -> list[str]:
    positional, overrides = _split(argv)
    if positional:
        raise ConfigError(f"{command}: unexpected argument {positional[0]!r} (expected key=value)")
    return overrides


def cmd_run(argv: list[str]) -> int:
    return run_config(_config(_no_positional(argv, "run")))


def run_config(cfg: dict) -> int:
    """Run a validated config's sweep and report (``harness run``, and each variant of -m)."""
    from .engine.aggregate import MetricsStream
    from .engine.sweep import run_and_read

    stream = MetricsStream(cfg)
    summary, _ = run_and_read(cfg, lambda: _report(cfg, stream), show=lambda s: s.show(),
                              listener=stream)
    return 1 if summary.failed else 0


def _report(cfg: dict, stream=None) -> None:
    """Aggregate (the rest of what ``stream`` aggregated during the sweep), write tables and
    figures, print claims and where everything went. The figures are drawn on worker processes
    while this process summarises diagnostics and evaluates tables and claims."""
    from concurrent.futures import ThreadPoolExecutor

    from .engine.aggregate import (
        aggregate,
        summarise_diagnostics,
        summarise_replicate_metrics,
    )
    from .engine.sweep import sweep_dir

    metrics = aggregate(cfg, stream=stream)
    root = sweep_dir(cfg)
    print(f"metrics: {root / 'metrics.csv'} ({len(metrics)} rows)")
    with ThreadPoolExecutor(max_workers=1) as pool:
        figures = pool.submit(_write_figures, cfg, metrics)
        diagnostics = summarise_diagnostics(cfg)
        if not diagnostics.empty:
            print(f"diagnostics: {root / 'diagnostics.csv'} ({len(diagnostics)} rows)")
        replicate_metrics = summarise_replicate_metrics(cfg)
        if not replicate_metrics.empty:
            print(f"replicate metrics: {root / 'replicate_metrics.csv'} "
                  f"({len(replicate_metrics)} rows)")
        written = _write_tables(cfg, metrics=metrics)
        if written:
            print(f"tables:  {written}")
        claims = _claims_text(cfg, metrics, brief=True)
        figs = figures.result()
    if figs:
        print(f"figures: {figs}")
    print(claims)


def _tables(cfg: dict, rows=None, metrics=None, tables=None) -> dict:
    """Every table of the study, or the given ``tables`` (name → :class:`harness.paper.Table`),
    as name → DataFrame, each made from the sweep's inputs it declares
    (``harness.paper.Table.reads``), each input read once and only if asked for."""
    from .engine import aggregate as agg
    from .engine.study import load_study

    if tables is None:
        tables = load_study(cfg["study"]).tables()
    given = {"rows": rows, "metrics": metrics}
    readers = {"rows": agg.read_rows, "metrics": agg.load_metrics,
               "replicate_metrics": agg.read_replicate_metrics,
               "diagnostics": agg.read_diagnostics}
    inputs: dict = {}

    def read(name):
        if name not in inputs:
            inputs[name] = given.get(name)
            if inputs[name] is None:
                inputs[name] = readers[name](cfg)
        return inputs[name]

    return {name: table(*[read(r) for r in table.reads]) for name, table in tables.items()}


def _write_tables(cfg: dict, show: bool = False, rows=None, metrics=None) -> Path | None:
    from .engine.store import atomic_write_csv
    from .engine.sweep import sweep_dir

    tables = _tables(cfg, rows, metrics)
    if not tables:
        return None
    out = sweep_dir(cfg) / "tables"
    for name, table in tables.items():
        atomic_write_csv(table, out / f"{name}.csv")
        if show:
            print(f"== {name} ==")
            print(table.to_string(index=False))
    return out


def _write_figures(cfg: dict, metrics) -> Path | None:
    """Render the study's figures into ``figures_dir`` (default ``<sweep>/figures``), several
    at once on local worker processes (loky reuses the sweep's warm workers): rendering, not
    computing, is most of a report's time (one study's figures at profile=paper: 9.4 s serial,
    4.5 s on 2 cores)."""
    from joblib import Parallel, cpu_count, delayed

    from .engine.study import load_study
    from .engine.sweep import sweep_dir

    figures = load_study(cfg["study"]).figures()
    if not figures:
        return None
    out = Path(cfg.get("figures_dir") or sweep_dir(cfg) / "figures")
    n_jobs = min(len(figures), max(cpu_count(), 1))
    # the figure functions travel by reference: a worker imports only their module (and
    # matplotlib), not the study and its paper package
    jobs = [delayed(_render_figure)(draw, metrics, out / f"{name}.png")
            for name, draw in figures.items()]
    drawn = (Parallel(n_jobs=n_jobs, backend="loky")(jobs) if n_jobs > 1
             else [f(*a, **k) for f, a, k in jobs])
    return out if any(drawn) else None


def _render_figure(draw, metrics, path: Path) -> bool:
    """Draw and save one figure; False when the run does not hold its scenarios or methods.
    (Figures are built on ``matplotlib.figure.Figure`` directly, never through pyplot, so
    nothing needs closing.)"""
    from .plotting import save_figure

    fig = draw(metrics)
    if fig is None:
        return False
    save_figure(fig, path)
    return True


def _print_claims(cfg: dict, metrics, brief: bool = False) -> int:
    print(_claims_text(cfg, metrics, brief))
    return 0


def _claims_text(cfg: dict, metrics, brief: bool = False) -> str:
    """The study's claim verdicts (``brief``: one summary line; a claim error is then shown,
    not raised, since the sweep itself succeeded)."""
    from .claims import ClaimError, evaluate_claims, format_claims, summary_line
    from .engine.study import load_study

    claims = load_study(cfg["study"]).claims()
    if not claims:
        return "no claims declared for this study"
    try:
        table = evaluate_claims(claims, metrics)
    except ClaimError as exc:
        if not brief:
            raise
        return f"claims:  error: {exc}"
    if brief:
        return (f"claims:  {summary_line(table)} (details: harness claims "
                f"study={cfg['study']['name']} profile={cfg['profile']['name']})")
    return format_claims(table)


def cmd_aggregate(argv):
    from .engine.aggregate import aggregate
    from .engine.sweep import sweep_dir

    cfg = _config(_no_positional(argv, "aggregate"))
    metrics = aggregate(cfg)
    print(f"metrics: {sweep_dir(cfg) / 'metrics.csv'} ({len(metrics)} rows)")
    return 0


def cmd_plot(argv):
    from .engine.aggregate import load_metrics

    cfg = _config(_no_positional(argv, "plot"))
    out = _write_figures(cfg, load_metrics(cfg))
    print(f"figures: {out}" if out else "no figures declared for this study")
    return 0


def cmd_table(argv):
    cfg = _config(_no_positional(argv, "table"))
    out = _write_tables(cfg, show=True)
    print(f"tables:  {out}" if out else "no tables declared for this study")
    return 0


def cmd_claims(argv):
    from .engine.aggregate import load_metrics

    cfg = _config(_no_positional(argv, "claims"))
    return _print_claims(cfg, load_metrics(cfg))


def cmd_report(argv):
    """The paper's report, docs/<paper>.md, from its profile=paper sweeps (harness/report.py)."""
    from .report import run_report

    return run_report(argv)


def cmd_list(argv):
    from . import config as config_mod
    from .engine.grid import expand_grid
    from .engine.study import load_study

    positional, overrides = _split(argv)
    what = positional[0] if positional else "studies"
    choices = ("studies", "methods", "estimands", "synthesizers")
    if what not in choices:
        raise ConfigError(f"list: {what!r} is not allowed (allowed: {', '.join(choices)})")
    if what == "studies":
        from .plugins import BROKEN_STUDIES, STUDIES

        for name in config_mod.options("study"):
            origin = (f"plug-in {STUDIES[name][1].rsplit('+', 1)[0]}" if name in STUDIES
                      else "harness")
            print(f"{name:24s} [{origin}]")
        for name, reason in sorted(BROKEN_STUDIES.items()):
            print(f"{name:24s} [broken] {reason}")
        return 0
    if what == "synthesizers":
        from .plugins import BROKEN, ORIGINS, load_synthesizer_plugins
        from .synthesizers import REGISTRY

        load_synthesizer_plugins()
        for name, cls in sorted(REGISTRY.items()):
            doc = (cls.__doc__ or sys.modules[cls.__module__].__doc__ or "").strip()
            print(f"{name:24s} [{ORIGINS.get(name, 'harness')}] "
                  f"{doc.splitlines()[0] if doc else ''}")
        for name, reason in sorted(BROKEN.items()):
            print(f"{name:24s} [broken] {reason}")
        return 0
    cfg = _config(overrides)
    study = load_study(cfg["study"])
    if what == "methods":
        for label, spec in cfg["study"]["roster"].items():
            print(f"{label:10s} {spec}")
    else:  # every evaluation's estimands with their true values, or the metrics it gives
        from .evaluation import IntervalEvaluation

        for scenario in expand_grid(study.grid_axes()):
            for ev in study.all_evaluations():
                if isinstance(ev, IntervalEvaluation):
                    print(scenario, ev.estimands(scenario))
                else:
                    print(scenario, f"metrics of {ev.name}:", ", ".join(ev.names) or "-")
    return 0


def cmd_replay(argv):
    from .engine.study import load_study
    from .engine.sweep import find_task
    from .engine.task import run_task

    positional, overrides = _split(argv)
    if len(positional) != 1:
        raise ConfigError("replay: give exactly one task key, e.g. "
                          "'<study>/n=40,pi=0.1/block=0/<method>'")
    key = positional[0].strip("'\"")
    if overrides == [] and "/" in key:
        overrides = [f"study={key.split('/')[0]}"]
    cfg = _config(overrides)
    try:
        task = find_task(cfg, key)
    except KeyError:
        raise ConfigError(f"replay: no task {key!r} in this sweep (see manifest.json)") from None
    result = run_task(load_study(cfg["study"]), task, cfg)
    rows = result.rows
    if rows.empty and not result.metrics.empty:  # a study of per-replicate metrics only
        means = result.metrics.groupby("metric", sort=False)["value"].mean()
        print(f"replayed {key}: {len(result.metrics)} metric rows; means: "
              + ", ".join(f"{k} {v:.4g}" for k, v in means.items()))
        return 0
    print(f"replayed {key}: {len(rows)} rows, "
          f"{rows['usable'].mean():.4f} usable, mean estimate {rows['estimate'].mean():.6g}")
    return 0


def cmd_bench(argv):
    from .engine.bench import run_bench

    options = ("--keep", "--sweep-only")
    bad = [a for a in argv if a.startswith("--") and a not in options]
    if bad:
        raise allowed("bench: option", bad[0], list(options))
    cfg = _config(_no_positional([a for a in argv if a not in options], "bench"))
    run_bench(cfg, report=_report, keep="--keep" in argv,
              throughput="--sweep-only" not in argv)
    return 0


def cmd_check(argv):
    """Regression check against results/reference/<study>/<profile>.parquet (engine/check.py)."""
    from .engine.check import parse_options, run_check

    opts, rest = parse_options(argv)
    return run_check(_config(_no_positional(rest, "check")), opts)


COMMANDS = {
    "run": cmd_run,
    "aggregate": cmd_aggregate,
    "plot": cmd_plot,
    "table": cmd_table,
    "claims": cmd_claims,
    "report": cmd_report,
    "list": cmd_list,
    "replay": cmd_replay,
    "bench": cmd_bench,
    "check": cmd_check,
}

if __name__ == "__main__":
    raise SystemExit(main())
