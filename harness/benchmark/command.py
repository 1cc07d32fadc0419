"""``harness benchmark``: any coded-records synthesizer on every study that can supply it
(issue 24 item 5; DESIGN §8 "The benchmark").

    harness benchmark methods=[MST,AIM] profile=ci|quick|paper [studies=[...]]
        [relation=add/remove|substitution] [replicates=N] [scenarios=first]
        [leave_out=[study:method,...]] [out_dir=...] [seed=...] [executor.n_jobs=2]
        [--collect[=NAME] | --merge=NAME]

Each benchmark method name maps to the roster entry of a synthesizer (``conf/benchmark.yaml``,
or any registered synthesizer's own name); it runs wrapped by the generic ``tabular`` adapter
(:mod:`harness.synthesizers.tabular`) beside each study's reference methods (the study's
``benchmark.reference``), resumably, into the study's own sweep directory
(``<out_dir>/<study>/<profile>/``, its seeds and evaluations). A study that declares no data
interface, or a method that does not take coded records, is listed, not run. Everything is
validated before anything runs (one line, exit 2). Results go to
``<out_dir>/benchmark/<profile>/``: ``leaderboard.csv``, ``study_ranks.csv``, ``scores.csv``,
``skipped.csv``, ``timings.csv``, one figure per paper and ``report.md``; ``--collect`` also
copies them to ``results/reference/benchmark/<NAME>/`` and ``plots/benchmark/<NAME>/`` (NAME:
the sweep name by default), from which ``harness report benchmark=<NAME>`` renders
``docs/benchmark.md``.

``leave_out=[study:method,...]`` leaves those pairs out (listed in ``skipped.csv`` as left out
by the command: e.g. a method too slow on one study for the run's time budget).

``--merge=NAME`` adds the run's methods on its studies to the committed benchmark NAME without
re-running the others (metric studies only; :mod:`.merge`).

A study may declare parameters of a benchmarked method (``benchmark.methods.<name>``, e.g. a
smaller AIM where the default does not fit the time budget); the report names them
(``interface.csv``: ``settings``).

``replicates=N`` and ``scenarios=first`` shrink every study (a smoke run; the sweep directory
is then ``<profile>-r<N>[-first]``, so a shrunk run never mixes with the profile's own).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pandas as pd
import yaml

from ..config import CONF_DIR, compose_config, options
from ..errors import ConfigError, allowed
from ..privacy.ledger import RELATIONS
from ..report import ROOT
from . import leaderboard as lb
from .leaderboard import FILES

PROFILES = ("ci", "quick", "paper")
KEYS = ("methods", "profile", "studies", "relation", "replicates", "scenarios", "leave_out",
        "out_dir", "seed", "block_size")
#: the study config key a benchmark's relation is forwarded to (issue 24 item 3)
RELATION_KEY = "study.relation"
ADAPTER = "tabular"


def method_specs() -> dict[str, dict]:
    """Benchmark method name → inner roster entry, from ``conf/benchmark.yaml``."""
    path = CONF_DIR / "benchmark.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
    return {str(k): dict(v) for k, v in ((spec or {}).get("methods") or {}).items()}


def _list(key: str, value: str) -> list[str]:
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    items = [v.strip() for v in text.split(",") if v.strip()]
    if not items:
        raise ConfigError(f"{key}: give at least one name, e.g. {key}=[a,b]")
    if len(set(items)) != len(items):
        raise ConfigError(f"{key}: a name is listed twice ({', '.join(items)})")
    return items


def parse_args(argv: list[str]) -> dict:
    """The benchmark's settings; every mistake is one line naming the key."""
    args = {"collect": False, "overrides": []}
    for arg in argv:
        if arg == "--collect" or arg.startswith("--collect="):
            name = arg.partition("=")[2]
            if arg.endswith("=") or (name and not name.replace("-", "").replace("_", "")
                                     .isalnum()):
                raise ConfigError(f"--collect: {name!r} is not a name (letters, digits, - _)")
            args["collect"] = name or True
            continue
        if arg.startswith("--merge="):
            name = arg.partition("=")[2]
            if not name or not name.replace("-", "").replace("_", "").isalnum():
                raise ConfigError(f"--merge: {name!r} is not a name (letters, digits, - _)")
            args["merge"] = name
            continue
        if arg.startswith("--") or "=" not in arg:
            raise ConfigError(f"benchmark: unexpected argument {arg!r} (expected key=value; "
                              f"keys: {', '.join(KEYS)}, executor.*; options --collect, "
                              f"--merge=NAME)")
        key, value = arg.split("=", 1)
        if key.startswith("executor."):
            args["overrides"].append(arg)
        elif key not in KEYS:
            raise ConfigError(f"{key}: unknown benchmark key (allowed: {', '.join(KEYS)}, "
                              f"executor.*)")
        else:
            args[key] = value
    if args["collect"] and args.get("merge"):
        raise ConfigError("--merge: give --collect (a new committed benchmark) or --merge=NAME "
                          "(into a committed one), not both")
    specs = method_specs()
    if "methods" not in args:
        raise ConfigError(f"methods: give the methods to benchmark, e.g. methods=[MST,AIM] "
                          f"(allowed: {', '.join(specs)} or any registered synthesizer)")
    args["methods"] = _list("methods", args["methods"])
    profile = args.setdefault("profile", "ci")
    if profile not in PROFILES:
        raise allowed("profile", profile, PROFILES)
    if args.get("relation") is not None and args["relation"] not in RELATIONS:
        raise allowed("relation", args["relation"], RELATIONS)
    known = options("study")
    if "studies" in args:
        args["studies"] = _list("studies", args["studies"])
        for s in args["studies"]:
            if s not in known:
                raise allowed("studies", s, known)
    else:
        args["studies"] = known
    if "replicates" in args:
        from ..validation import check_number

        try:
            n = int(args["replicates"])
        except ValueError:
            n = args["replicates"]
        args["replicates"] = int(check_number("replicates", n, integer=True, minimum=1))
    pairs = _list("leave_out", args["leave_out"]) if "leave_out" in args else []
    args["leave_out"] = set()
    for pair in pairs:
        study, _, method = pair.partition(":")
        if study not in args["studies"]:
            raise allowed("leave_out", pair, [f"{s}:<method>" for s in args["studies"]])
        if method not in args["methods"]:
            raise allowed("leave_out", pair, [f"{study}:{m}" for m in args["methods"]])
        args["leave_out"].add((study, method))
    if args.get("scenarios", "all") not in ("all", "first"):
        raise allowed("scenarios", args["scenarios"], ("all", "first"))
    for key in ("out_dir", "seed", "block_size"):
        if key in args:
            args["overrides"].append(f"{key}={args[key]}")
    args["specs"] = {name: _method_spec(name, specs) for name in args["methods"]}
    return args


def _method_spec(name: str, specs: dict) -> dict:
    """The inner roster entry of benchmark method ``name``: its entry in conf/benchmark.yaml,
    else a registered (or plug-in) synthesizer of that name with its defaults."""
    from ..synthesizers import REGISTRY

    if name in specs:
        return specs[name]
    if name not in REGISTRY:
        from ..synthesizers.registry import require

        require(name, "methods.")
    if name not in REGISTRY or name == ADAPTER:
        choices = [*specs, *sorted(n for n in REGISTRY if n != ADAPTER)]
        raise allowed("methods", name, choices)
    return {"synthesizer": name}


def _sweep_name(args: dict) -> str:
    name = args["profile"]
    if "replicates" in args:
        name += f"-r{args['replicates']}"
    if args.get("scenarios") == "first":
        name += "-first"
    return name


def _accepts(spec: dict) -> str | None:
    """Why the inner synthesizer of ``spec`` cannot take coded records, or None."""
    from ..synthesizers import REGISTRY

    name = spec.get("synthesizer")
    if name not in REGISTRY:
        from ..synthesizers.registry import require

        require(name, "methods.")
    cls = REGISTRY.get(name)
    if cls is None:
        return f"synthesizer {name!r} is not registered"
    kind = getattr(cls, "input_kind", None)
    if kind != "coded" or cls.release_kind != "records":
        return f"{name} takes {kind!r} data, not coded records"
    return None


def plan(args: dict) -> tuple[list[dict], list[dict]]:
    """(runnable study configs, skipped (study, method, reason) rows), every config validated:
    nothing is written here."""
    from ..config import validate
    from ..engine.study import load_study

    overrides = [f"profile={args['profile']}", *args["overrides"]]
    runs, skipped = [], []
    for study in args["studies"]:
        composed = compose_config([f"study={study}", *overrides])
        scfg = composed["study"]
        bench = scfg.get("benchmark")
        if not bench:
            skipped += [{"study": study, "method": m, "reason": "declares no benchmark data "
                         "interface"} for m in args["methods"]]
            continue
        if bench.get("unsupported"):
            skipped += [{"study": study, "method": m, "reason": bench["unsupported"]}
                        for m in args["methods"]]
            continue
        labels = []
        for name in args["methods"]:
            if (study, name) in args.get("leave_out", ()):
                skipped.append({"study": study, "method": name,
                                "reason": "left out by the command (leave_out)"})
                continue
            why = _accepts(args["specs"][name])
            if why:
                skipped.append({"study": study, "method": name, "reason": why})
                continue
            if name in scfg["roster"]:
                raise ConfigError(f"methods: {name!r} is a roster label of study {study}; "
                                  f"name the benchmark method otherwise")
            scfg["roster"][name] = {"synthesizer": ADAPTER,
                                    "inner": {**args["specs"][name], **_settings(bench, name)},
                                    "interface": dict(bench.get("interface") or {})}
            labels.append(name)
        if not labels:
            continue
        reference = list(bench.get("reference") or [])
        for label in reference:
            if label not in scfg["roster"]:
                raise allowed(f"study.benchmark.reference ({study})", label, list(scfg["roster"]))
        composed["methods"] = [*reference, *labels]
        composed["sweep"] = _sweep_name(args)
        if args.get("relation") is not None:
            scfg["relation"] = args["relation"]  # forwarded as study.relation (RELATION_KEY)
        profile = args["profile"]
        if "replicates" in args:
            scfg.setdefault("replicates", {})[profile] = args["replicates"]
        if args.get("scenarios") == "first":
            scfg["grid"] = {axis: values[:1] for axis, values in scfg["grid"].items()}
        try:
            cfg = validate(composed)
        except ConfigError as exc:
            if args.get("relation") is not None and "relation" in str(exc):
                raise ConfigError(f"relation: study {study} does not take {RELATION_KEY} "
                                  f"({exc})") from None
            raise
        study_obj = load_study(cfg["study"])
        for label, why in _too_large(study_obj, labels).items():
            skipped.append({"study": study, "method": label, "reason": why})
            labels.remove(label)
            cfg["methods"] = [m for m in cfg["methods"] if m != label]
        if not labels:
            continue
        runs.append({"study": study, "config": cfg, "labels": labels, "reference": reference,
                     "bench": bench, "module": cfg["study"].get("module", ""),
                     "relations": _relations(study_obj, cfg),
                     "interface": {**_describe(study_obj, labels),
                                   "settings": _settings_text(bench, labels)}})
    return runs, skipped


def _settings(bench: dict, name: str) -> dict:
    """The parameters a study declares for benchmark method ``name`` (its
    ``benchmark.methods.<name>``, e.g. a smaller AIM where the default one does not fit the
    run's time), over the method's own entry: a study's deviation from the method's defaults
    is declared in its conf, never in harness/, and named in the report (``settings``)."""
    declared = (bench.get("methods") or {}).get(name) or {}
    if not isinstance(declared, dict):
        raise ConfigError(f"study.benchmark.methods.{name}: give parameters as a mapping, "
                          f"got {declared!r}")
    return dict(declared)


def _settings_text(bench: dict, labels: list[str]) -> str:
    """The declared parameters of the study's benchmarked methods, as the report shows them
    (``AIM: rounds=26, max_model_size=1``; empty: every method at its defaults)."""
    parts = []
    for name in labels:
        declared = _settings(bench, name)
        if declared:
            parts.append(f"{name}: " + ", ".join(f"{k}={v}" for k, v in declared.items()))
    return "; ".join(parts)


def _too_large(study, labels: list[str]) -> dict[str, str]:
    """Benchmarked methods whose synthesizer declares the largest full cross-table it handles
    (``max_cells``; MST and AIM declare none, their junction-tree path takes any domain)
    below the study's coded domain in some scenario of its grid (the domain can grow with a
    grid axis, e.g. the number of columns): label → the reason it is not run there (decided
    before anything runs, instead of failing tasks)."""
    import math

    import numpy as np

    from ..data import Original
    from ..engine.grid import expand_grid

    limited = {}
    scenario = expand_grid(study.grid_axes())[0]
    for label in labels:
        inner = study.synthesizer(label, scenario).inner
        limit = getattr(inner, "max_cells", None)
        if limit is not None:
            limited[label] = (limit, inner.name)
    if not limited:
        return {}
    cells = 0
    for scenario in expand_grid(study.grid_axes()):
        train = Original.of(study.generate(scenario, np.random.default_rng(0), 1)).train
        layout = study.synthesizer(labels[0], scenario).interface.layout(train)
        cells = max(cells, math.prod(len(c.levels) for c in layout.coded_schema.columns))
    shown = f"{cells:,}" if cells < 10**15 else f"{cells:.1e}"
    return {label: f"{name} handles at most {limit:,} cells in the full cross-table; the "
                   f"study's coded domain has {shown}"
            for label, (limit, name) in limited.items() if cells > limit}


def _describe(study, labels: list[str]) -> dict:
    """How the study's data are coded (from one replicate of its first scenario, drawn here
    from a throwaway stream: the coding is checked before anything runs), and which benchmarked
    methods read the records' weights (``reads_weights`` on the synthesizer; default: no)."""
    import numpy as np

    from ..data import CountBatch, Original
    from ..engine.grid import expand_grid

    scenario = expand_grid(study.grid_axes())[0]
    train = Original.of(study.generate(scenario, np.random.default_rng(0), 1)).train
    synth = study.synthesizer(labels[0], scenario)
    layout = synth.interface.layout(train)
    synth.interface.encode(train, layout)
    columns = ", ".join(f"{c.name}({len(c.levels)})" for c in layout.coded_schema.columns)
    binned = [layout.schema.columns[j].name for j in layout.numeric] if layout.schema else []
    weights = getattr(train, "weights", None) is not None
    readers = [m for m in labels if getattr(study.synthesizer(m, scenario).inner,
                                            "reads_weights", False)]
    return {"study": study.name,
            "data": "counts" if isinstance(train, CountBatch) else "records",
            "coded_columns": columns, "binned": ", ".join(binned),
            "weights": ("read by " + ", ".join(readers) if readers else "ignored") if weights
            else "none", "strata": "yes" if layout.has_strata else "no"}


def _relations(study, cfg: dict) -> dict[str, str]:
    """Method label → the neighbour relation of its ledger (private methods)."""
    from ..engine.grid import expand_grid

    scenario = expand_grid(study.grid_axes())[0]
    out = {}
    for label in cfg["methods"]:
        synth = study.synthesizer(label, scenario)
        if synth.private:
            out[label] = str(synth.neighbour_relation)
    return out


def _paper(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "experiments" else parts[0]


def run(args: dict) -> int:
    from ..engine.aggregate import aggregate
    from ..engine.sweep import run_and_read

    runs, skipped = plan(args)
    out = Path(runs[0]["config"]["out_dir"] if runs else "results") / "benchmark" / \
        _sweep_name(args)
    parts, timings, failed = [], [], []
    print(f"benchmark {', '.join(args['methods'])} at profile={args['profile']}: "
          f"{len(runs)} studies to run, {len({s['study'] for s in skipped})} with methods "
          f"skipped")
    try:
        for i, r in enumerate(runs, 1):
            cfg = r["config"]
            print(f"[{i}/{len(runs)}] {r['study']}: {', '.join(cfg['methods'])}", flush=True)
            _, metrics = run_and_read(cfg, lambda cfg=cfg: aggregate(cfg),
                                            show=lambda s: s.show())
            timings += _task_seconds(cfg, r["study"])
            if metrics is None:
                failed.append(r["study"])
                continue
            bench = r["bench"]
            parts.append(lb.study_rows(
                metrics[metrics["method"].isin(cfg["methods"])], paper=_paper(r["module"]),
                study=r["study"], original=bench.get("original"),
                headline=bench.get("headline"), relations=r["relations"]))
    except KeyboardInterrupt:
        print("\ninterrupted: finished tasks are stored; run the same command again to resume",
              file=sys.stderr)
        return 130
    board, ranks, scores = lb.leaderboard(parts, focus=set(args["methods"]))
    write_outputs(out, board, ranks, scores, pd.DataFrame(skipped, columns=["study", "method",
                                                                             "reason"]),
                  pd.DataFrame(timings), args, pd.DataFrame([r["interface"] for r in runs]))
    if args["collect"]:
        collect(out, _sweep_name(args) if args["collect"] is True else args["collect"])
    if args.get("merge") and not failed:
        from .merge import merge

        merge(out, args["merge"], args["methods"],
              {r["study"]: r["bench"].get("headline") or {} for r in runs})
    if failed:
        print(f"failed studies (see their failures.jsonl): {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0


def _task_seconds(cfg: dict, study: str) -> list[dict]:
    """Per method: the seconds its tasks took when they ran (the sweep's timings.jsonl, the
    last run of each task) and their replicates, so a resumed benchmark reports the cost of
    the runs that made its rows."""
    import json

    from ..engine.sweep import sweep_dir

    path = sweep_dir(cfg) / "timings.jsonl"
    last = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec.get("ok"):
                last[rec["key"]] = rec
    out = {}
    for key, rec in last.items():
        method = key.rsplit("/", 1)[-1]
        if method in cfg["methods"]:
            row = out.setdefault(method, {"study": study, "method": method, "task_seconds": 0.0,
                                          "replicates": 0})
            row["task_seconds"] += rec["seconds"]
            row["replicates"] += rec["replicates"]
    return [{**v, "task_seconds": round(v["task_seconds"], 1)} for _, v in sorted(out.items())]


def write_outputs(out: Path, board, ranks, scores, skipped, timings, args: dict,
                  interface) -> None:
    from .report import draw_figures, render

    out.mkdir(parents=True, exist_ok=True)
    board.to_csv(out / "leaderboard.csv", index=False)
    ranks.to_csv(out / "study_ranks.csv", index=False)
    scores.to_csv(out / "scores.csv", index=False)
    skipped.to_csv(out / "skipped.csv", index=False)
    timings.to_csv(out / "timings.csv", index=False)
    interface.to_csv(out / "interface.csv", index=False)
    figures = draw_figures(board, out / "figures")
    (out / "report.md").write_text(render(board, ranks, scores, skipped, timings, interface,
                                          title=f"Benchmark of {', '.join(args['methods'])} "
                                                f"at profile={args['profile']}",
                                          figures=[f"figures/{f.name}" for f in figures]),
                                   encoding="utf-8")
    print(f"leaderboard: {out / 'leaderboard.csv'} ({len(board)} rows)")
    print(f"report:      {out / 'report.md'}")
    if len(scores):
        print("overall (sum of study ranks, lower is better): " + ", ".join(
            f"{m} {s:g} ({n} studies)" for m, s, n in scores[["method", "score", "studies"]]
            .itertuples(index=False)))


def collect(out: Path, name: str, root: Path = ROOT) -> Path:
    """Copy a benchmark's result files to ``results/reference/benchmark/<name>/`` (the
    leaderboard averaged over estimands, :func:`leaderboard.summarise`) and its figures to
    ``plots/benchmark/<name>/`` (committed; ``harness report benchmark=<name>``)."""
    dest = root / "results" / "reference" / "benchmark" / name
    dest.mkdir(parents=True, exist_ok=True)
    for f in FILES:
        if f == "leaderboard.csv":  # committed averaged over estimands (lb.summarise)
            lb.summarise(pd.read_csv(out / f)).to_csv(dest / f, index=False,
                                                      float_format="%.6g")
        else:
            shutil.copyfile(out / f, dest / f)
    plots = root / "plots" / "benchmark" / name
    plots.mkdir(parents=True, exist_ok=True)
    for f in sorted((out / "figures").glob("*.png")):
        shutil.copyfile(f, plots / f.name)
    print(f"collected: {dest.relative_to(root)}, {plots.relative_to(root)}")
    return dest


def cmd_benchmark(argv: list[str]) -> int:
    return run(parse_args(argv))
