"""``harness report paper=<p>``: a paper's report, ``docs/<p>.md``.

Two stages, so that the report regenerates byte for byte from committed files:

1. **collect** (:func:`collect`): for every study and variant of the paper, from its
   ``profile=paper`` sweep (or the profile the paper names for the study,
   :attr:`harness.paper.StudyParts.report_profile`; run first if it is missing or incomplete,
   as ``harness run`` would),
   write small, deterministic files under ``results/reference/<p>/report/``. A variant
   (:class:`harness.paper.Variant`) is its base study with its config overrides, swept into
   ``<out_dir>/<base>/<variant>/``; it is collected, and named in placeholders, like a study:

   - ``paper.json``: the paper's title, its studies in report order, its variants and its
     computations (:class:`harness.paper.Computation`: tables made outside the sweep engine,
     collected into ``<name>/tables/`` (or, for one that names a ``study``, into that study's
     ``tables/``, which a re-collect of the study keeps) with a ``<name>/run.json`` of their
     settings, and re-made only when those are missing or their settings changed; their
     figures, drawn from those tables, go to ``plots/<name>/``);
   - ``<study>/run.json``: replicates, scenarios, methods, ε values, seed, block size, tasks,
     cores, and the figures drawn into ``plots/<study>/``;
   - ``<study>/tables/<name>.csv``: every table of ``study.tables()`` (ours beside the paper's);
   - ``<study>/claims.csv``: id, verdict, the paper's statement and the evidence;
   - ``<study>/timings.csv``: per method, the tasks, replicates and summed task seconds of
     ``timings.jsonl`` (and the full-sweep wall time of ``harness bench``, when it was run);
   - ``<study>/metrics.csv``: the aggregated metrics that ``{{metric ...}}`` placeholders of
     the template name, and nothing else;
   - ``<study>/figures.parquet``: for a study or variant with figures, the aggregated
     metrics they are drawn from (:data:`FIGURE_DATA`); ``--figures`` (:func:`redraw_figures`)
     redraws them, and a computation's figures from its tables, with no sweep.

2. **render** (:func:`render`): ``docs/<p>.md`` from those files and the paper package's prose
   template ``experiments/<p>/report.md``. Rendering is a pure function of the two (no clock,
   no paths of this machine), so the same files give the same bytes.

Placeholders of the template (one per ``{{ ... }}``; words separated by spaces; ``S`` is a
study or a variant):

- ``{{title}}``: the paper's citation;
- ``{{table S NAME [cols=a,b,...] [key=value ...]}}``: a collected table as markdown, with
  optional columns and row filters; numbers print to three significant digits
  (:func:`_table_number`), the paper's columns as the paper prints them;
- ``{{claims S}}``: a table of id, verdict, statement and evidence; ``{{tally S}}``: "9 of 12
  claims pass, 3 fail";
- ``{{claim S ID}}``: one verdict and its evidence, inline;
- ``{{figure S NAME}}``: the image ``../plots/S/NAME.png``;
- ``{{timings}}``: one row per study and variant; ``{{replicates S}}``: the size of the
  study's sweep (with its profile and profile=paper's count when it is not profile=paper;
  ``part=count``: that count alone, without the grid);
- ``{{metric S key=value ... [fmt=.3g]}}``: one aggregated metric (the filters select exactly
  one row of the metrics table, e.g. ``method=LAP metric=rmse n=40 pi=0.1 log_epsilon=4``);
- ``{{value S TABLE COLUMN key=value ... [fmt=...]}}``: one cell of a collected table;
- ``{{paper TEXT}}``: a value quoted from the paper (a printed result, a claimed range), rendered
  as TEXT verbatim; it declares the number as the paper's, not ours, so that the template test
  (``tests/harness/test_report_templates.py``) accepts it outside a results placeholder.

A placeholder that names an unknown study, table, claim, figure or kind is a one-line error
naming the template line and the allowed values.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
KINDS = ("title", "table", "claims", "tally", "claim", "figure", "timings", "bench", "cost",
         "replicates", "metric", "value", "paper")
FLOAT_FORMAT = "%.10g"
#: the aggregated metrics a study's or variant's figures are drawn from, committed beside its
#: collected files so that ``--figures`` redraws them without a sweep
FIGURE_DATA = "figures.parquet"
#: harness bench's bench.csv column -> the timings.csv column it is kept as
BENCH_COLUMNS = {"sweep_seconds": "bench_sweep_seconds", "report_seconds": "bench_report_seconds",
                 "command_over_sweep": "bench_command_over_sweep"}


def report_dir(paper: str, root: Path = ROOT) -> Path:
    return root / "results" / "reference" / paper / "report"


def template_path(paper: str, root: Path = ROOT) -> Path:
    return root / "experiments" / paper / "report.md"


def docs_path(paper: str, root: Path = ROOT) -> Path:
    return root / "docs" / f"{paper}.md"


# --------------------------------------------------------------------------- placeholders


@dataclass(frozen=True)
class Placeholder:
    kind: str
    args: tuple[str, ...]  # positional words
    options: tuple[tuple[str, str], ...]  # key=value words, in order
    line: int
    text: str = ""  # everything after the kind, verbatim ({{paper TEXT}})

    def option(self, key: str, default=None):
        return dict(self.options).get(key, default)

    def filters(self, *reserved: str) -> list[tuple[str, str]]:
        return [(k, v) for k, v in self.options if k not in reserved]


def parse_placeholders(text: str, where: str = "template") -> list[tuple[re.Match, Placeholder]]:
    out = []
    for match in PLACEHOLDER.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        words = match.group(1).split()
        if not words:
            raise ConfigError(f"{where}:{line}: empty placeholder {{{{}}}} (allowed kinds: "
                              f"{', '.join(KINDS)})")
        kind, rest = words[0], words[1:]
        if kind not in KINDS:
            raise ConfigError(f"{where}:{line}: unknown placeholder kind {kind!r} (allowed: "
                              f"{', '.join(KINDS)})")
        args = tuple(w for w in rest if "=" not in w)
        options = tuple(tuple(w.split("=", 1)) for w in rest if "=" in w)
        text = match.group(1).strip()[len(kind):].strip()
        out.append((match, Placeholder(kind, args, options, line, text)))
    return out


def _selector(options) -> str:
    """Canonical text of a metric selection: its filters sorted by key."""
    return " ".join(f"{k}={v}" for k, v in sorted(options))


def _matches(cell, wanted: str) -> bool:
    if wanted.lower() == "nan":  # the ε of a non-private method
        try:
            return math.isnan(float(cell)) if cell != "" else True
        except (TypeError, ValueError):
            return False
    if isinstance(cell, str) or cell is None:
        if cell == wanted:
            return True
        try:
            return math.isclose(float(cell), float(wanted), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    try:
        return math.isclose(float(cell), float(wanted), rel_tol=1e-9, abs_tol=1e-12)
    except (TypeError, ValueError):
        return str(cell) == wanted


def _float(value) -> float:
    """A collected cell as a float (NaN when empty or not a number)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _number(value: str, fmt: str | None) -> str:
    if fmt is None or value == "":
        return value if value != "" else "—"
    try:
        return format(float(value), fmt)
    except ValueError:
        return value


# --------------------------------------------------------------------------- collect


def _write_csv(frame, path: Path) -> None:
    from .engine.store import atomic_write_text

    buf = io.StringIO()
    frame.to_csv(buf, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    atomic_write_text(buf.getvalue(), path)


def _write_json(obj, path: Path) -> None:
    from .engine.store import atomic_write_text

    atomic_write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n", path)


def collect(paper_name: str, overrides: list[str] = (), *, studies=None, root: Path = ROOT,
            plots: bool = True) -> Path:
    """Collect every study and variant of the paper (or only those named in ``studies``) into
    ``report_dir``. Every config is validated before any sweep runs."""
    from .paper import load_paper

    paper = load_paper(paper_name)
    out = report_dir(paper_name, root)
    template = template_path(paper_name, root)
    if not template.exists():
        raise ConfigError(f"report: {paper_name!r} has no prose template "
                          f"{template.relative_to(root)}; write it first")
    placeholders = [p for _, p in parse_placeholders(template.read_text(encoding="utf-8"),
                                                     str(template.relative_to(root)))]
    names = [*paper.studies, *paper.variants, *paper.computations]
    chosen = names if studies is None else check_studies(paper, studies)
    configs = {name: study_config(paper, name, list(overrides), root=root, plots=plots)
               for name in chosen if name not in paper.computations}
    meta = {"name": paper.name, "title": paper.title, "studies": list(paper.studies)}
    if paper.variants:
        meta["variants"] = list(paper.variants)
    if paper.computations:
        meta["computations"] = list(paper.computations)
    _write_json(meta, out / "paper.json")
    for name in chosen:
        if name in paper.computations:
            computation = paper.computations[name]
            study = computation.study
            collect_computation(name, computation, out / name, root=root if plots else None,
                                tables_dir=None if study is None else out / study / "tables",
                                reserved=() if study is None else paper.studies[study].tables)
            continue
        wanted = [p for p in placeholders if p.kind == "metric" and p.args[:1] == (name,)]
        collect_study(name, configs[name], out / name, wanted, root=root, plots=plots,
                      variant=paper.variants.get(name), keep=_computed_tables(paper, name, out))
    return out


def _computed_tables(paper, study: str, out: Path) -> set[str]:
    """The tables that the paper's computations naming ``study`` last wrote into its
    ``tables/`` (listed in their ``run.json``): a re-collect of the study keeps them."""
    keep = set()
    for name, computation in paper.computations.items():
        run = out / name / "run.json"
        if computation.study == study and run.exists():
            keep.update(json.loads(run.read_text(encoding="utf-8")).get("tables", []))
    return keep


def study_config(paper, name: str, overrides: list[str], *, root: Path = ROOT,
                 plots: bool = True) -> dict:
    """The validated config of the paper's study or variant ``name`` at the profile its report
    reads (``profile=paper`` unless the study's :attr:`harness.paper.StudyParts.report_profile`
    names another): a variant is its base study at ``profile=paper`` with its overrides (after
    the command line's), in the sweep named after it, without figures."""
    from . import config as config_mod

    variant = paper.variants.get(name)
    if variant is None:
        profile = paper.studies[name].report_profile
        cfg = config_mod.load([f"study={name}", f"profile={profile}", *overrides])
        return dict(cfg, figures_dir=str(root / "plots" / name)) if plots else cfg
    try:
        return config_mod.load([f"study={variant.base}", "profile=paper", *overrides,
                                *variant.overrides, f"sweep={name}"])
    except ConfigError as exc:
        raise ConfigError(f"report: variant {name!r}: {exc}") from None


def collect_study(study_name: str, cfg: dict, out: Path, metric_placeholders, *,
                  root: Path = ROOT, plots: bool = True, variant=None, keep=()) -> None:
    """Run (or resume) the sweep of ``cfg`` and write its files into ``out``; for a
    :class:`harness.paper.Variant` its tables, claims and figures replace the study's own.
    ``keep``: tables in ``out/tables`` that are not the study's (a computation's,
    :func:`_computed_tables`) and stay."""
    from .engine.aggregate import MetricsStream
    from .engine.sweep import run_and_read

    parts = None if variant is None else variant.parts
    stream = MetricsStream(cfg)
    summary, result = run_and_read(cfg, lambda: _read_study(cfg, stream, parts),
                                   show=lambda s: s.show(), listener=stream)
    if summary.failed:
        raise ConfigError(f"report: {len(summary.failed)} task(s) of {study_name} failed; see "
                          f"its failures.jsonl and re-run one with harness replay '<task key>'")
    metrics, tables, claims = result
    for stale in (out / "tables").glob("*.csv") if (out / "tables").exists() else []:
        if stale.stem not in tables and stale.stem not in keep:
            stale.unlink()
    for tname, table in tables.items():
        _write_csv(table, out / "tables" / f"{tname}.csv")
    _write_csv(claims[["id", "verdict", "claim", "evidence"]], out / "claims.csv")
    _write_csv(sweep_timings(cfg), out / "timings.csv")
    _write_csv(_metric_values(study_name, metrics, metric_placeholders), out / "metrics.csv")
    figures = []
    if plots:
        _commit_and_draw(study_name, cfg, variant, metrics, out, root)
    from .engine.study import load_study

    study = load_study(cfg["study"])
    for fname in study.figures() if parts is None else ():
        if (root / "plots" / study_name / f"{fname}.png").exists():
            figures.append(fname)
    if plots and variant is not None:
        figures += sorted(variant.figures)
    info = _run_info(cfg, study, figures)
    if variant is not None:
        info = dict(info, study=study_name, base=variant.base, sweep=cfg["sweep"],
                    overrides=list(variant.overrides))
    _write_json(info, out / "run.json")
    print(f"report: collected {study_name} into {out}")


def _declares_figures(cfg: dict, variant) -> bool:
    from .engine.study import load_study

    return bool(variant.figures if variant is not None else load_study(cfg["study"]).figures())


def _commit_and_draw(name: str, cfg: dict, variant, metrics, out: Path, root: Path) -> None:
    """Commit the aggregated metrics that the figures of a study or variant are drawn from
    (``out/``:data:`FIGURE_DATA`), read them back and draw the figures from what was read, so
    that ``harness report --figures`` (:func:`redraw_figures`) redraws the same images from
    the committed file without a sweep. Without figures, a stale data file goes."""
    import pandas as pd

    from .engine.store import atomic_write_parquet

    path = out / FIGURE_DATA
    if not _declares_figures(cfg, variant):
        path.unlink(missing_ok=True)
        return
    atomic_write_parquet(metrics, path)
    _draw_figures(name, cfg, variant, pd.read_parquet(path), root)


def _draw_figures(name: str, cfg: dict, variant, metrics, root: Path) -> None:
    """A study's figures into its ``figures_dir``, or a variant's own into
    ``<root>/plots/<name>/``."""
    if variant is None:
        from .outputs import write_figures

        write_figures(cfg, metrics)
        return
    _save_own_figures("variant", name, variant.figures, metrics, root)


def _computation_figures(name: str, computation, tables: dict, root: Path) -> None:
    """A computation's figures, drawn from its tables, into ``<root>/plots/<name>/``."""
    _save_own_figures("computation", name, computation.figures, tables, root)


def _save_own_figures(kind: str, name: str, figures: dict, data, root: Path) -> None:
    """Draw each of a variant's or computation's ``figures`` from ``data`` into
    ``<root>/plots/<name>/``; a drawing that returns nothing is a one-line error."""
    from .plotting import save_figure

    for fname, draw in figures.items():
        fig = draw(data)
        if fig is None:
            raise ConfigError(f"report: {kind} {name}: figure {fname!r} drew nothing")
        save_figure(fig, root / "plots" / name / f"{fname}.png")


def collect_computation(name: str, computation, out: Path, root: Path | None = ROOT, *,
                        tables_dir: Path | None = None, reserved=()) -> None:
    """Write the tables of a :class:`harness.paper.Computation` into ``out/tables`` or
    ``tables_dir`` (its study's, where ``reserved`` names the study's own tables, which it may
    not overwrite), re-made only when missing or made with other settings; its figures into
    ``<root>/plots/<name>/`` (none when ``root`` is None) and its ``run.json`` into ``out``
    (listing, for a ``tables_dir``, the tables it wrote there)."""
    settings = json.loads(json.dumps(dict(computation.settings), sort_keys=True))
    info = {"computation": name, "description": computation.description,
            "settings": settings}
    if computation.figures and root is not None:
        info["figures"] = sorted(computation.figures)
    if tables_dir is not None:
        info["study"] = computation.study
    run = out / "run.json"
    before = json.loads(run.read_text(encoding="utf-8")) if run.exists() else None
    listed = [] if before is None else before.get("tables", [])
    present = tables_dir is None or all((tables_dir / f"{t}.csv").exists() for t in listed)
    if before is not None and present and \
            {k: v for k, v in before.items() if k != "tables"} == info:
        print(f"report: {name} is up to date in {out}")
        return
    tables = computation.make()
    clash = sorted(set(tables) & set(reserved))
    if clash:
        raise ConfigError(f"report: computation {name}: table {clash[0]!r} is one of study "
                          f"{computation.study}'s own tables; give it another name")
    if tables_dir is None:
        tables_dir = out / "tables"
        stale = [p.stem for p in tables_dir.glob("*.csv")] if tables_dir.exists() else []
    else:
        info["tables"] = sorted(tables)
        stale = listed  # only what this computation wrote there before
    for tname in stale:
        if tname not in tables:
            (tables_dir / f"{tname}.csv").unlink(missing_ok=True)
    for tname, table in tables.items():
        _write_csv(table, tables_dir / f"{tname}.csv")
    if "figures" in info:
        _computation_figures(name, computation, tables, root)
    _write_json(info, run)
    print(f"report: computed {name} into {out}")


def redraw_figures(paper_name: str, studies=None, root: Path = ROOT) -> list[str]:
    """``harness report --figures``: redraw the figures of the paper's collected studies and
    variants (or of those named in ``studies``) from the aggregated metrics committed beside
    them (:data:`FIGURE_DATA`, written by :func:`collect`), and its computations' from their
    committed tables, into ``<root>/plots/<name>/``; no sweep runs. A study collected before
    its figure data was committed keeps its images (named in the returned list); naming one in
    ``studies`` is a one-line error, raised before anything is drawn."""
    import pandas as pd

    from .paper import load_paper

    paper = load_paper(paper_name)
    out = report_dir(paper_name, root)
    names = [*paper.studies, *paper.variants, *paper.computations]
    chosen = names if studies is None else check_studies(paper, studies)
    plan, kept = {}, []  # name -> what draws its figures
    for name in chosen:
        computation = paper.computations.get(name)
        if computation is not None:
            if computation.figures and (out / name / "run.json").exists():
                plan[name] = lambda n=name, c=computation: _computation_figures(
                    n, c, _committed_tables(n, c, out), root)
            continue
        cfg = study_config(paper, name, [], root=root)
        variant = paper.variants.get(name)
        if not _declares_figures(cfg, variant):
            continue
        if (out / name / FIGURE_DATA).exists():
            plan[name] = lambda n=name, c=cfg, v=variant: _draw_figures(
                n, c, v, pd.read_parquet(out / n / FIGURE_DATA), root)
        elif studies is not None:
            raise ConfigError(f"report: --figures: {name} has no committed figure data "
                              f"({(out / name / FIGURE_DATA).relative_to(root)}); collect it "
                              f"once with harness report paper={paper_name} --studies={name}")
        else:
            kept.append(name)
    for name, draw in plan.items():
        draw()
        print(f"report: redrew the figures of {name}")
    for name in kept:
        print(f"report: {name}: figures kept as drawn (no {FIGURE_DATA} committed; collect it "
              f"once to commit it)")
    return kept


def _committed_tables(name: str, computation, out: Path) -> dict:
    """A computation's committed tables (those its run.json lists in its study's ``tables/``,
    or all of its own), as its figures read them."""
    import pandas as pd

    if computation.study is None:
        return {p.stem: pd.read_csv(p) for p in sorted((out / name / "tables").glob("*.csv"))}
    listed = json.loads((out / name / "run.json").read_text(encoding="utf-8")).get("tables", [])
    return {t: pd.read_csv(out / computation.study / "tables" / f"{t}.csv") for t in listed}


def _read_study(cfg: dict, stream=None, parts=None):
    from .claims import evaluate_claims
    from .engine.aggregate import load_metrics
    from .engine.study import load_study
    from .outputs import study_tables
    from .paper import StudyParts

    metrics = load_metrics(cfg, stream)
    if parts is None:
        study = load_study(cfg["study"])
        parts = StudyParts(claims=study.claims(), tables=study.tables())
    tables = study_tables(cfg, metrics=metrics, tables=parts.tables)
    claims = evaluate_claims(list(parts.claims), metrics)
    return metrics, tables, claims


def _metric_values(study_name: str, metrics, placeholders):
    import pandas as pd

    records = {}
    for p in placeholders:
        filters = p.filters("fmt")
        sel = _selector(filters)
        if sel in records:
            continue
        mask = pd.Series(True, index=metrics.index)
        for key, value in filters:
            if key not in metrics.columns:
                raise ConfigError(f"report: {{{{metric {study_name} {sel}}}}}: {key!r} is not a "
                                  f"column (allowed: {', '.join(map(str, metrics.columns))})")
            mask &= metrics[key].map(lambda c, v=value: _matches(c, v))
        hit = metrics[mask]
        if len(hit) != 1:
            raise ConfigError(f"report: {{{{metric {study_name} {sel}}}}} selects {len(hit)} rows "
                              f"of the metrics table, not 1; add filters (method, estimand, "
                              f"metric, log_epsilon, grid axes)")
        row = hit.iloc[0]
        records[sel] = {"selector": sel, "value": float(row["value"]),
                        "mcse": float(row["mcse"]), "n_rep": int(row["n_rep"])}
    frame = pd.DataFrame(sorted(records.values(), key=lambda r: r["selector"]),
                         columns=["selector", "value", "mcse", "n_rep"])
    return frame


def sweep_timings(cfg: dict):
    """Per method: tasks, replicates and the summed task seconds logged by the sweep (the last
    record of each current task), and harness bench's full-sweep wall time when present."""
    import pandas as pd

    from .engine.store import SweepStore
    from .engine.sweep import MANIFEST, sweep_dir

    root = sweep_dir(cfg)
    manifest = SweepStore(root).read_json(MANIFEST) or {}
    current = set(manifest.get("tasks", []))
    last = {}
    path = root / "timings.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if rec.get("ok") and rec.get("key") in current:
                last[rec["key"]] = rec
    rows = {}
    for key, rec in last.items():
        method = key.rsplit("/", 1)[-1]
        r = rows.setdefault(method, {"method": method, "tasks": 0, "replicates": 0,
                                     "task_seconds": 0.0, "task_cpu_seconds": 0.0})
        r["tasks"] += 1
        r["replicates"] += int(rec.get("replicates", 0))
        r["task_seconds"] += float(rec["seconds"])
        # CPU seconds are logged since 2026-11 (harness.engine.sweep.execute_task); a method
        # with any task from before has none
        r["task_cpu_seconds"] += float(rec.get("cpu_seconds", math.nan))
    order = {m: i for i, m in enumerate(cfg["study"]["roster"])}
    frame = pd.DataFrame(sorted(rows.values(), key=lambda r: order.get(r["method"], 1e9)),
                         columns=["method", "tasks", "replicates", "task_seconds",
                                  "task_cpu_seconds"])
    frame["task_seconds"] = frame["task_seconds"].round(1)
    frame["task_cpu_seconds"] = frame["task_cpu_seconds"].round(1)
    bench = root / "bench.csv"
    for column in BENCH_COLUMNS.values():
        frame[column] = math.nan
    if bench.exists():
        b = pd.read_csv(bench)
        if len(b):
            for source, column in BENCH_COLUMNS.items():
                if source in b:
                    frame[column] = round(float(b[source].iloc[0]), 2)
            speedup = b["speedup"].replace([math.inf, -math.inf], math.nan).dropna() \
                if "speedup" in b else pd.Series(dtype=float)
            if len(speedup):
                frame["bench_speedup_min"] = round(float(speedup.min()), 1)
                frame["bench_speedup_max"] = round(float(speedup.max()), 1)
    frame["tasks_planned"] = len(current)
    return frame


def _run_info(cfg: dict, study, figures: list[str]) -> dict:
    from .engine.bench import cores
    from .engine.grid import expand_grid

    info = {
        "study": study.name,
        "profile": cfg["profile"]["name"],
        "replicates": int(cfg["n_replicates"]),
        "scenarios": len(expand_grid(study.grid_axes())),
        "epsilons": len(study.epsilons()),
        "methods": list(cfg["methods"]),
        "seed": int(cfg["seed"]),
        "block_size": int(cfg["block_size"]),
        "cores": int(cores(cfg)),
        "figures": sorted(figures),
    }
    if info["profile"] != "paper":  # a report that reads another profile says how much it shows
        info["paper_replicates"] = int(cfg["study"]["replicates"]["paper"])
    return info


# --------------------------------------------------------------------------- render


@dataclass
class Collected:
    """The committed files of one paper's report, read once."""

    paper: dict
    studies: dict  # study → {"run", "tables", "claims", "timings", "metrics"}


def _read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _names(paper: dict) -> list[str]:
    """The studies, then the variants, then the computations of a collected paper.json."""
    return [*paper["studies"], *paper.get("variants", []), *paper.get("computations", [])]


def read_collected(paper_name: str, root: Path = ROOT) -> Collected:
    base = report_dir(paper_name, root)
    meta = base / "paper.json"
    if not meta.exists():
        raise ConfigError(f"report: nothing collected for {paper_name!r} "
                          f"({meta.relative_to(root)} is missing); run harness report "
                          f"paper={paper_name} without --render-only first")
    paper = json.loads(meta.read_text(encoding="utf-8"))
    studies = {}
    for name in _names(paper):
        d = base / name
        if not (d / "run.json").exists():
            continue
        tables = {p.stem: _read_csv(p) for p in sorted((d / "tables").glob("*.csv"))}
        tables_cols = {}
        for p in sorted((d / "tables").glob("*.csv")):
            with p.open(newline="", encoding="utf-8") as fh:
                tables_cols[p.stem] = next(csv.reader(fh), [])
        computation = name in paper.get("computations", [])
        studies[name] = {
            "run": json.loads((d / "run.json").read_text(encoding="utf-8")),
            "tables": tables,
            "columns": tables_cols,
            "claims": [] if computation else _read_csv(d / "claims.csv"),
            "timings": [] if computation else _read_csv(d / "timings.csv"),
            "metrics": {} if computation else {r["selector"]: r
                                               for r in _read_csv(d / "metrics.csv")},
            "computation": computation,
        }
    return Collected(paper, studies)


#: significant digits of a number in a rendered table (issue 25: "3 significant digits")
TABLE_DIGITS = 3


def _table_number(text: str, column: str) -> str:
    """A table cell as the report prints it: a non-integer number to :data:`TABLE_DIGITS`
    significant digits (no exponent from 1 up: 23609.4 prints 23600); integers, text, NaN and
    the paper's own columns (named ``paper...``, quoted as printed) stay as collected."""
    if column.startswith("paper"):
        return text
    try:
        x = float(text)
    except (TypeError, ValueError):
        return text
    if not math.isfinite(x) or (x == int(x) and "e" not in text.lower()):
        return text
    short = f"{x:.{TABLE_DIGITS}g}"
    if "e" in short and abs(x) >= 1:
        short = f"{float(short):.0f}"
    return short


def _cell(text: str) -> str:
    text = str(text).replace("\n", " ").replace("|", "\\|")
    return text if text != "" else "—"


def _markdown_table(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |",
             "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


class _Renderer:
    def __init__(self, collected: Collected, where: str):
        self.c = collected
        self.where = where

    def fail(self, p: Placeholder, message: str) -> ConfigError:
        return ConfigError(f"{self.where}:{p.line}: {{{{{' '.join((p.kind, *p.args))}}}}}: "
                           f"{message}")

    def need(self, p: Placeholder, n: int, usage: str) -> None:
        if len(p.args) != n:
            raise self.fail(p, f"expected {usage}")

    def study(self, p: Placeholder) -> dict:
        name = p.args[0]
        if name not in _names(self.c.paper):
            raise self.fail(p, f"unknown study {name!r} (allowed: "
                               f"{', '.join(_names(self.c.paper))})")
        if name not in self.c.studies:
            raise self.fail(p, f"study {name!r} has not been collected; run harness report "
                               f"paper={self.c.paper['name']} without --render-only")
        return self.c.studies[name]

    def sweep(self, p: Placeholder) -> dict:
        """The collected sweep of a study or variant (a computation has none)."""
        s = self.study(p)
        if s["computation"]:
            raise self.fail(p, f"{p.args[0]!r} is a computation, not a sweep (it has tables "
                               f"only)")
        return s

    def table_of(self, p: Placeholder, s: dict, name: str) -> list[dict]:
        if name not in s["tables"]:
            raise self.fail(p, f"unknown table {name!r} (allowed: "
                               f"{', '.join(s['tables']) or 'none'})")
        return s["tables"][name]

    def rows_where(self, p: Placeholder, rows: list[dict], columns: list[str], filters) -> list:
        for key, _ in filters:
            if key not in columns:
                raise self.fail(p, f"unknown column {key!r} (allowed: {', '.join(columns)})")
        return [r for r in rows if all(_matches(r[k], v) for k, v in filters)]

    def render(self, p: Placeholder) -> str:
        return getattr(self, "k_" + p.kind)(p)

    def k_title(self, p):
        self.need(p, 0, "{{title}}")
        return self.c.paper["title"]

    def k_table(self, p):
        self.need(p, 2, "{{table STUDY NAME [cols=a,b] [column=value ...]}}")
        s = self.study(p)
        rows = self.table_of(p, s, p.args[1])
        columns = s["columns"][p.args[1]]
        cols = p.option("cols")
        shown = cols.split(",") if cols else columns
        for col in shown:
            if col not in columns:
                raise self.fail(p, f"unknown column {col!r} (allowed: {', '.join(columns)})")
        rows = self.rows_where(p, rows, columns, p.filters("cols"))
        return _markdown_table(shown, [[_table_number(r[c], c) for c in shown] for r in rows])

    def k_claims(self, p):
        self.need(p, 1, "{{claims STUDY}}")
        s = self.sweep(p)
        rows = [[c["id"], f"**{c['verdict']}**" if c["verdict"] != "PASS" else c["verdict"],
                 c["claim"], c["evidence"]] for c in s["claims"]]
        return _markdown_table(["id", "verdict", "the paper's statement", "evidence"], rows)

    def k_tally(self, p):
        self.need(p, 1, "{{tally STUDY}}")
        s = self.sweep(p)
        words = [c["verdict"] for c in s["claims"]]
        parts = [f"{words.count('PASS')} of {len(words)} claims pass"]
        if words.count("FAIL"):
            parts.append(f"{words.count('FAIL')} fail")
        if words.count("UNDECIDED"):
            parts.append(f"{words.count('UNDECIDED')} undecided")
        return ", ".join(parts)

    def k_claim(self, p):
        self.need(p, 2, "{{claim STUDY ID}}")
        s = self.sweep(p)
        ids = [c["id"] for c in s["claims"]]
        if p.args[1] not in ids:
            raise self.fail(p, f"unknown claim {p.args[1]!r} (allowed: {', '.join(ids)})")
        c = s["claims"][ids.index(p.args[1])]
        return f"**{c['verdict']}** ({c['evidence']})"

    def k_figure(self, p):
        self.need(p, 2, "{{figure STUDY NAME}}")
        s = self.study(p)
        figures = s["run"].get("figures", [])
        if p.args[1] not in figures:
            raise self.fail(p, f"unknown figure {p.args[1]!r} (allowed: "
                               f"{', '.join(figures) or 'none'})")
        study, name = p.args
        return f"![{study}: {name}](../plots/{study}/{name}.png)"

    def k_replicates(self, p):
        self.need(p, 1, "{{replicates STUDY [part=count]}}")
        part = p.option("part")
        if part not in (None, "count"):
            raise self.fail(p, f"part={part!r} is not allowed (allowed: count)")
        r = self.sweep(p)["run"]
        scen = "scenario" if r["scenarios"] == 1 else "scenarios"
        eps = "ε value" if r["epsilons"] == 1 else "ε values"
        size = f"{r['replicates']} replicates"
        if r.get("profile", "paper") != "paper":
            size = (f"profile={r['profile']}: {r['replicates']} of profile=paper's "
                    f"{r['paper_replicates']} replicates")
        if part == "count":
            return size
        return (f"{size} × {r['scenarios']} {scen} × {r['epsilons']} "
                f"{eps} × {len(r['methods'])} methods ({', '.join(r['methods'])}), root "
                f"seed {r['seed']}, blocks of {r['block_size']}")

    def k_timings(self, p):
        self.need(p, 0, "{{timings}}")
        rows = []
        for name in _names(self.c.paper):
            if name not in self.c.studies or self.c.studies[name]["computation"]:
                continue
            s = self.c.studies[name]
            t = s["timings"]
            tasks = sum(int(r["tasks"]) for r in t)
            planned = int(t[0]["tasks_planned"]) if t else 0
            seconds = sum(float(r["task_seconds"]) for r in t)
            slowest = max(t, key=lambda r: float(r["task_seconds"]))["method"] if t else ""
            b = t[0] if t else {}
            lo, hi = b.get("bench_speedup_min", ""), b.get("bench_speedup_max", "")
            speedup = (f"{_number(lo, '.0f')}–{_number(hi, '.0f')}×"
                       if _number(lo, ".0f") not in ("", "—") else "—")
            reps = f"{s['run']['replicates']}"
            if s["run"].get("profile", "paper") != "paper":
                reps += f" (profile={s['run']['profile']})"
            rows.append([name, f"{tasks} of {planned}", reps,
                         f"{seconds:.1f}", slowest, str(s["run"]["cores"]),
                         _number(b.get("bench_sweep_seconds", ""), ".1f"),
                         _number(b.get("bench_report_seconds", ""), ".1f"),
                         _number(b.get("bench_command_over_sweep", ""), ".2f"), speedup])
        return _markdown_table(["study", "tasks timed", "replicates", "task seconds (sum)",
                                "slowest method", "cores", "bench sweep s", "then report s",
                                "command / sweep", "vectorised / loop"], rows)

    def k_bench(self, p):
        usage = "{{bench STUDY [STUDY ...] [budget=SECONDS]}}"
        if not p.args:
            raise self.fail(p, f"expected {usage}")
        sweeps, cores = [], set()
        for name in p.args:  # each study's benched sweep, then its report
            one = dataclasses.replace(p, args=(name,))
            s = self.sweep(one)
            b = s["timings"][0] if s["timings"] else {}
            sweep_s, report_s = (_float(b.get(k, "")) for k in ("bench_sweep_seconds",
                                                                "bench_report_seconds"))
            if not math.isfinite(sweep_s):
                raise self.fail(p, f"{name} was not benched: run harness bench study={name} "
                                   f"profile=paper --keep, then harness report")
            sweeps.append((sweep_s, report_s if math.isfinite(report_s) else 0.0))
            cores.add(str(s["run"]["cores"]))
        total = sum(a + b for a, b in sweeps)
        on = "/".join(sorted(cores))
        where = f"{total:.0f} s ({total / 60:.1f} min) of wall time on {on} cores"
        if len(sweeps) == 1:
            text = f"{where}: the sweep {sweeps[0][0]:.0f} s, then the report {sweeps[0][1]:.0f} s"
        else:
            text = (f"{where} for the {len(sweeps)} studies together (sweeps "
                    f"{sum(a for a, _ in sweeps):.0f} s, then their reports "
                    f"{sum(b for _, b in sweeps):.0f} s)")
        budget = p.option("budget")
        if budget is not None:
            limit = _float(budget)
            if not math.isfinite(limit) or limit <= 0:
                raise self.fail(p, f"budget={budget!r} must be a positive number of seconds")
            word = "within" if total <= limit else "**over**"
            text += f", {word} the budget of {limit:.0f} s ({limit / 60:.0f} min)"
        return text

    def k_cost(self, p):
        """The measured cost of the sweep the report reads, as CPU time: its summed task seconds
        per replicate, and with ``replicates=N`` what N replicates would take on one core (e.g.
        a paper's count that the machine cannot afford)."""
        self.need(p, 1, "{{cost STUDY [replicates=N]}}")
        s = self.sweep(p)
        cpu = [_float(r.get("task_cpu_seconds", "nan")) for r in s["timings"]]
        measured_cpu = bool(cpu) and all(math.isfinite(c) for c in cpu)
        seconds = sum(cpu) if measured_cpu else sum(float(r["task_seconds"])
                                                    for r in s["timings"])
        reps = int(s["run"]["replicates"])
        if not s["timings"] or seconds <= 0 or reps <= 0:
            raise self.fail(p, f"{p.args[0]} has no task timings; run harness report "
                               f"paper={self.c.paper['name']} without --render-only")
        per = seconds / reps
        unit = "CPU seconds of its tasks" if measured_cpu else "task-seconds"
        text = (f"{seconds:,.0f} {unit} for {reps:,} replicates, {per:,.0f} s of one core per "
                f"replicate")
        target = p.option("replicates")
        if target is not None:
            n = _float(target)
            if not (math.isfinite(n) and n >= 1 and n == int(n)):
                raise self.fail(p, f"replicates={target!r} must be a whole number >= 1")
            total = per * n
            text += (f"; {int(n)} replicates: about {total / 3600:,.0f} core-hours "
                     f"({total / 86400:.1f} core-days)")
        return text

    def k_metric(self, p):
        self.need(p, 1, "{{metric STUDY key=value ... [fmt=.3g]}}")
        s = self.sweep(p)
        sel = _selector(p.filters("fmt"))
        if sel not in s["metrics"]:
            raise self.fail(p, f"metric {sel!r} was not collected; run harness report "
                               f"paper={self.c.paper['name']} without --render-only")
        return _number(s["metrics"][sel]["value"], p.option("fmt", ".3g"))

    def k_value(self, p):
        self.need(p, 3, "{{value STUDY TABLE COLUMN column=value ... [fmt=...]}}")
        s = self.study(p)
        rows = self.table_of(p, s, p.args[1])
        columns = s["columns"][p.args[1]]
        if p.args[2] not in columns:
            raise self.fail(p, f"unknown column {p.args[2]!r} (allowed: {', '.join(columns)})")
        hit = self.rows_where(p, rows, columns, p.filters("fmt"))
        if len(hit) != 1:
            raise self.fail(p, f"the filters select {len(hit)} rows, not 1")
        return _number(hit[0][p.args[2]], p.option("fmt"))


    def k_paper(self, p):
        if not p.text:
            raise self.fail(p, "expected {{paper TEXT}}: the value as the paper prints it")
        return p.text


def render(collected: Collected, template: str, where: str = "template") -> str:
    """The report: the template with every placeholder replaced (a pure function)."""
    r = _Renderer(collected, where)
    parts, pos = [], 0
    for match, p in parse_placeholders(template, where):
        parts.append(template[pos:match.start()])
        parts.append(r.render(p))
        pos = match.end()
    parts.append(template[pos:])
    name = collected.paper["name"]
    header = (f"<!-- Generated by `harness report paper={name}` from "
              f"experiments/{name}/report.md and results/reference/{name}/report/. "
              f"Do not edit: edit the template, then run "
              f"`harness report paper={name} --render-only`. -->\n")
    return header + "".join(parts)


def render_paper(paper_name: str, root: Path = ROOT) -> str:
    template = template_path(paper_name, root)
    if not template.exists():
        raise ConfigError(f"report: {paper_name!r} has no prose template "
                          f"{template.relative_to(root)}")
    return render(read_collected(paper_name, root), template.read_text(encoding="utf-8"),
                  str(template.relative_to(root)))


def write_report(paper_name: str, root: Path = ROOT) -> Path:
    from .engine.store import atomic_write_text

    text = render_paper(paper_name, root)
    out = docs_path(paper_name, root)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(text, out)
    return out


def check_studies(paper, studies: list[str]) -> list[str]:
    """``--studies``: a non-empty list of the paper's studies, variants and computations."""
    names = [*paper.studies, *paper.variants, *paper.computations]
    if not studies:
        raise ConfigError(f"report: --studies= names no study (allowed: {', '.join(names)})")
    for name in studies:
        if name not in names:
            raise ConfigError(f"report: study {name!r} is not one of the paper's "
                              f"(allowed: {', '.join(names)})")
    return list(studies)


def parse_args(argv: list[str]) -> tuple[str, bool, list[str], list[str] | None, bool]:
    """``paper=<p>`` (required), ``--render-only``, ``--figures``, ``--studies=a,b`` and
    config overrides."""
    paper, render_only, studies, rest, figures = None, False, None, [], False
    for arg in argv:
        if arg == "--render-only":
            render_only = True
        elif arg == "--figures":
            figures = True
        elif arg.startswith("--studies="):
            studies = [s for s in arg.split("=", 1)[1].split(",") if s]
        elif arg.startswith("--"):
            raise ConfigError(f"report: unknown option {arg!r} (allowed: --render-only, "
                              f"--figures, --studies=a,b)")
        elif arg.startswith("paper="):
            paper = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    if not paper:
        from .paper import papers

        raise ConfigError(f"report: give paper=<name> (allowed: {', '.join(papers())})")
    return paper, render_only, rest, studies, figures


def run_report(argv: list[str], root: Path = ROOT) -> int:
    """Collect (or, with ``--render-only``, not), then render. ``--figures`` collects nothing
    either: it redraws the figures from the committed files (:func:`redraw_figures`; with
    ``--studies``, those studies' only), then renders."""
    import time

    from .paper import load_paper

    paper, render_only, overrides, studies, figures = parse_args(argv)
    loaded = load_paper(paper)  # an unknown paper is one line naming the allowed ones
    if studies is not None:
        check_studies(loaded, studies)
    only = "--figures" if figures else "--render-only"
    if (render_only or figures) and overrides:
        raise ConfigError(f"report: {only} reads the committed files only; "
                          f"unexpected {overrides[0]!r}")
    if render_only and not figures and studies is not None:  # one document: it renders whole
        raise ConfigError("report: --studies chooses the studies to collect, and --render-only "
                          "collects none (it re-renders the whole report from the committed "
                          "files); give one of the two")
    t0 = time.perf_counter()
    if figures:
        redraw_figures(paper, studies, root)
        print(f"report: figures redrawn from committed files in "
              f"{time.perf_counter() - t0:.1f} s")
    elif not render_only:
        where = collect(paper, overrides, studies=studies, root=root)
        print(f"report: collected into {where.relative_to(root)} "
              f"in {time.perf_counter() - t0:.1f} s")
    out = write_report(paper, root)
    print(f"report: {out.relative_to(root)}")
    return 0
