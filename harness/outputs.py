"""What a sweep leaves besides its task files: tables, figures and claim verdicts, written
after ``harness run`` (and each variant of ``harness -m``), by ``harness table``/``plot``/
``claims`` and by ``harness report`` when it collects a paper's studies.

:func:`run_config` runs a validated config's sweep and then :func:`report_sweep`, which
aggregates it and writes the rest. The command line (``harness.cli``), the variants of
``harness -m`` (``harness.multirun``) and the paper reports (``harness.report``) all import
this module; it imports none of them.
"""

from __future__ import annotations

from pathlib import Path


def run_config(cfg: dict, overrides: list[str] | None = None) -> int:
    """Run a validated config's sweep and report (``harness run``, and each variant of -m);
    ``overrides``: the command line's, which the hint to the claims' details repeats."""
    from .engine.aggregate import MetricsStream
    from .engine.sweep import run_and_read

    stream = MetricsStream(cfg)
    summary, _ = run_and_read(cfg, lambda: report_sweep(cfg, stream, overrides),
                              show=lambda s: s.show(), listener=stream)
    return 1 if summary.failed else 0


def report_sweep(cfg: dict, stream=None, overrides: list[str] | None = None) -> None:
    """Aggregate (the rest of what ``stream`` aggregated during the sweep), write tables and
    figures, print claims and where everything went. The figures are drawn on worker processes
    while this process summarises diagnostics and evaluates tables and claims. ``overrides``
    (the run's command line) are repeated in the hint to the claims' details."""
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
        figures = pool.submit(write_figures, cfg, metrics)
        diagnostics = summarise_diagnostics(cfg)
        if not diagnostics.empty:
            print(f"diagnostics: {root / 'diagnostics.csv'} ({len(diagnostics)} rows)")
        replicate_metrics = summarise_replicate_metrics(cfg)
        if not replicate_metrics.empty:
            print(f"replicate metrics: {root / 'replicate_metrics.csv'} "
                  f"({len(replicate_metrics)} rows)")
        written = write_tables(cfg, metrics=metrics)
        if written:
            print(f"tables:  {written}")
        claims = claims_text(cfg, metrics, brief=True, overrides=overrides)
        figs = figures.result()
    if figs:
        print(f"figures: {figs}")
    print(claims)


def study_tables(cfg: dict, rows=None, metrics=None, tables=None) -> dict:
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


def write_tables(cfg: dict, show: bool = False, rows=None, metrics=None) -> Path | None:
    """Write every table of the study as ``<sweep>/tables/<name>.csv`` (``show``: print them
    too); None when the study declares no tables."""
    from .engine.store import atomic_write_csv
    from .engine.sweep import sweep_dir

    tables = study_tables(cfg, rows, metrics)
    if not tables:
        return None
    out = sweep_dir(cfg) / "tables"
    for name, table in tables.items():
        atomic_write_csv(table, out / f"{name}.csv")
        if show:
            print(f"== {name} ==")
            print(table.to_string(index=False))
    return out


def write_figures(cfg: dict, metrics) -> Path | None:
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


def claims_text(cfg: dict, metrics, brief: bool = False,
                overrides: list[str] | None = None) -> str:
    """The study's claim verdicts (``brief``: one summary line, with the command that shows
    them in full, :func:`claims_command`; a claim error is then shown, not raised, since the
    sweep itself succeeded)."""
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
        return f"claims:  {summary_line(table)} (details: {claims_command(cfg, overrides)})"
    return format_claims(table)


def claims_command(cfg: dict, overrides: list[str] | None = None) -> str:
    """``harness claims`` with the run's overrides (shell-quoted), so that it reads this very
    sweep: the same study, profile, sweep directory (``sweep=``, ``out_dir=``) and settings.
    Without the command line (``overrides`` None), the config's study, profile, sweep name (when
    it is not the profile's) and out_dir are named."""
    import shlex

    given = list(overrides or [])
    if overrides is None:
        if cfg["sweep"] != cfg["profile"]["name"]:
            given.append(f"sweep={cfg['sweep']}")
        given.append(f"out_dir={cfg['out_dir']}")
    keys = {o.split("=", 1)[0].lstrip("+~") for o in given}
    named = [f"{k}={v}" for k, v in (("study", cfg["study"]["name"]),
                                     ("profile", cfg["profile"]["name"])) if k not in keys]
    return " ".join(["harness claims", *named, *map(shlex.quote, given)])
