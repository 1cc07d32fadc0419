"""Command line: ``harness [SUBCOMMAND] [key=value ...]`` (README: Commands).

Sub-commands: run (default), aggregate, plot, table, claims, report, list, replay, bench,
check. Overrides are
Hydra 1.3 overrides of ``conf/config.yaml`` (e.g. ``study=<name> profile=paper
executor.n_jobs=2``). Invalid input prints one line naming the key and the allowed values and
exits with status 2 before anything is written.
"""

from __future__ import annotations

import os
import sys

from .errors import ConfigError, allowed, interrupted_line, one_line
from .outputs import claims_text, report_sweep, run_config, write_figures, write_tables

SUBCOMMANDS = (
    "run", "aggregate", "plot", "table", "claims", "report", "list", "replay", "bench", "check",
    "benchmark",
)


def usage() -> str:
    """What ``harness --help`` prints: every sub-command and every ``list`` target."""
    return (
        f"usage: harness [{'|'.join(SUBCOMMANDS)}] [key=value ...]\n"
        "       harness report paper=<paper> [--render-only|--figures] [--studies=a,b] "
        "[key=value ...]\n"
        "       harness check [--mode statistical|exact] [--update] [--alpha A] "
        "[--reference-dir DIR] [key=value ...]\n"
        "       harness -m [run] key=a,b [key=value ...] [hydra/launcher=slurm]  (variants)\n"
        "       harness replay '<task key>' [key=value ...]\n"
        "       harness bench [--keep] [--sweep-only] [key=value ...]\n"
        "       harness bench --release=M1,M2 [--replicates=R] [--collect=NAME] [key=value ...]\n"
        f"       harness list [{'|'.join(LIST_TARGETS)}] [key=value ...]\n"
        "       harness benchmark methods=[A,B] profile=ci|quick|paper [studies=[...]] "
        "[relation=add/remove|substitution] [--collect[=NAME]]\n"
        "       harness report benchmark=<name>"
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # help first, wherever it stands (`harness bench --help` too): nothing else is read
    if argv and argv[0] == "help" or any(a in ("-h", "--help") for a in argv):
        print(usage())
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
    except BrokenPipeError:  # `harness list studies | head`: the reader has what it wanted
        _quiet_stdout()
        return 0
    except OSError as exc:  # a directory that cannot be written, a disk that is full, ...
        where = f" {exc.filename}" if exc.filename else ""
        print(f"error: cannot write{where} ({exc.strerror or type(exc).__name__}); give another "
              f"out_dir, or free the path", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C: one line, no traceback, 128 + SIGINT
        line = interrupted_line(exc)
    # printed once the exception and the frames it holds are gone (a sweep's progress bar is
    # closed with them), so that this is the last line
    print(line, file=sys.stderr)
    return 130


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush into a closed pipe
    prints nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


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
    overrides = _no_positional(argv, "run")
    return run_config(_config(overrides), overrides)


def _print_claims(cfg: dict, metrics, brief: bool = False) -> int:
    print(claims_text(cfg, metrics, brief))
    return 0


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
    out = write_figures(cfg, load_metrics(cfg))
    print(f"figures: {out}" if out else "no figures declared for this study")
    return 0


def cmd_table(argv):
    cfg = _config(_no_positional(argv, "table"))
    out = write_tables(cfg, show=True)
    print(f"tables:  {out}" if out else "no tables declared for this study")
    return 0


def cmd_claims(argv):
    from .engine.aggregate import load_metrics

    cfg = _config(_no_positional(argv, "claims"))
    return _print_claims(cfg, load_metrics(cfg))


def cmd_report(argv):
    """The paper's report, docs/<paper>.md, from its profile=paper sweeps (harness/report.py)."""
    from .report import run_report

    if any(a.startswith("benchmark=") for a in argv):  # docs/benchmark.md (harness/benchmark)
        from .benchmark.report import run_report_benchmark

        return run_report_benchmark(argv)
    return run_report(argv)


def _list_studies(overrides):
    from . import config as config_mod
    from .plugins import BROKEN_STUDIES, STUDIES

    for name in config_mod.options("study"):
        origin = (f"plug-in {STUDIES[name][1].rsplit('+', 1)[0]}" if name in STUDIES
                  else "harness")
        print(f"{name:24s} [{origin}]")
    for name, reason in sorted(BROKEN_STUDIES.items()):
        print(f"{name:24s} [broken] {reason}")


def _list_methods(overrides):
    for label, spec in _config(overrides)["study"]["roster"].items():
        print(f"{label:10s} {spec}")


def _list_estimands(overrides):
    """Every evaluation's estimands with their true values, or the metrics it gives."""
    from .engine.grid import expand_grid
    from .engine.study import load_study
    from .evaluation import IntervalEvaluation

    study = load_study(_config(overrides)["study"])
    for scenario in expand_grid(study.grid_axes()):
        for ev in study.all_evaluations():
            if isinstance(ev, IntervalEvaluation):
                print(scenario, ev.estimands(scenario))
            else:
                print(scenario, f"metrics of {ev.name}:", ", ".join(ev.names) or "-")


def _list_synthesizers(overrides):
    from .synthesizers.registry import BROKEN, ORIGINS, REGISTRY, load_synthesizer_plugins

    load_synthesizer_plugins()
    for name, cls in sorted(REGISTRY.items()):
        doc = (cls.__doc__ or sys.modules[cls.__module__].__doc__ or "").strip()
        print(f"{name:24s} [{ORIGINS.get(name, 'harness')}] "
              f"{doc.splitlines()[0] if doc else ''}")
    for name, reason in sorted(BROKEN.items()):
        print(f"{name:24s} [broken] {reason}")


#: what ``harness list <target>`` shows (the first is the default); ``--help`` names them all
LIST_TARGETS = {
    "studies": _list_studies,
    "methods": _list_methods,
    "estimands": _list_estimands,
    "synthesizers": _list_synthesizers,
}


def cmd_list(argv):
    positional, overrides = _split(argv)
    what = positional[0] if positional else next(iter(LIST_TARGETS))
    if what not in LIST_TARGETS:
        raise allowed("list", what, list(LIST_TARGETS))
    LIST_TARGETS[what](overrides)
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
    valued = ("--release", "--replicates", "--collect")  # the release bench (benchmark methods)
    given = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in argv
             if a.startswith("--") and "=" in a and a.split("=", 1)[0] in valued}
    bad = [a for a in argv if a.startswith("--") and a not in options
           and a.split("=", 1)[0] not in valued]
    if bad:
        raise allowed("bench: option", bad[0], [*options, *(f"{v}=..." for v in valued)])
    rest = [a for a in argv if not a.startswith("--")]
    cfg = _config(_no_positional(rest, "bench"))
    if "--release" in given:
        from .benchmark.release_bench import run_release_bench

        methods = [m for m in given["--release"].strip("[]").split(",") if m]
        replicates = given.get("--replicates", "100")
        if not replicates.isdigit():
            raise ConfigError(f"--replicates: must be an integer >= 1, got {replicates!r}")
        run_release_bench(cfg, methods, int(replicates), given.get("--collect"))
        return 0
    if given:
        raise ConfigError(f"bench: {next(iter(given))} needs --release=<methods>")
    run_bench(cfg, report=report_sweep, keep="--keep" in argv,
              throughput="--sweep-only" not in argv)
    return 0


def cmd_check(argv):
    """Regression check against results/reference/<study>/<profile>.parquet (engine/check.py)."""
    from .engine.check import parse_options, run_check

    opts, rest = parse_options(argv)
    return run_check(_config(_no_positional(rest, "check")), opts)


def cmd_benchmark(argv):
    """Any coded-records synthesizer on every study (harness/benchmark/command.py)."""
    from .benchmark.command import cmd_benchmark as benchmark

    return benchmark(argv)


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
    "benchmark": cmd_benchmark,
}

if __name__ == "__main__":
    raise SystemExit(main())
