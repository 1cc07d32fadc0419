"""The benchmark's report: ``report.md`` beside a run's leaderboard, and ``docs/benchmark.md``
rendered from the committed files by ``harness report benchmark=<name>`` (the same renderer,
so the two never differ; tables through :mod:`harness.report`'s markdown writer)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..report import ROOT, _markdown_table

#: the metric a paper's figure shows per study: coverage for interval studies, else the first
#: ranked headline metric
FIGURE_METRICS = ("coverage",)


def _fmt(x, fmt: str = ".3g") -> str:
    return "" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, fmt)


def method_colours(methods) -> dict:
    """One colour per method name, the same in every figure of a report: the report's methods
    in sorted order over tab20 (distinct up to 20 methods)."""
    import matplotlib

    cmap = matplotlib.colormaps["tab20"]
    return {m: cmap(i % 20) for i, m in enumerate(sorted(set(methods)))}


def _panel_data(board: pd.DataFrame) -> pd.DataFrame:
    """Per study, method and ε: the mean over scenarios and estimands of the study's figure
    metric (coverage, else its first ranked headline metric)."""
    rows = []
    for study, part in board.groupby("study"):
        base = part["metric"].str.split(":").str[0]
        if (base == "coverage").any():
            metric, sel = "coverage", part[base == "coverage"]
        else:
            ranked = part[part["rank"].notna()]
            if ranked.empty:
                continue
            metric = ranked["metric"].iloc[0]
            sel = part[part["metric"] == metric]
        g = sel.groupby(["method", "epsilon"], dropna=False)["value"].mean().reset_index()
        rows.append(g.assign(study=study, paper=part["paper"].iloc[0], metric=metric))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def draw_figures(board: pd.DataFrame, out: Path, papers=None) -> list[Path]:
    """One figure per paper (``papers``: only these): a panel per study, its figure metric
    against ln ε per method (non-private baselines as horizontal lines); colours over every
    method of ``board``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = _panel_data(board)
    colour = method_colours(board["method"])
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    if data.empty:
        return paths
    for paper, pdata in data.groupby("paper"):
        if papers is not None and paper not in papers:
            continue
        studies = sorted(pdata["study"].unique())
        fig, axes = plt.subplots(1, len(studies), figsize=(4 * len(studies), 3.2), squeeze=False)
        for ax, study in zip(axes[0], studies, strict=True):
            sdata = pdata[pdata["study"] == study]
            for method, m in sdata.groupby("method"):
                m = m.sort_values("epsilon")
                if m["epsilon"].isna().all():
                    ax.axhline(m["value"].mean(), ls="--", lw=1, color=colour[method],
                               label=method)
                else:
                    ax.plot(np.log(m["epsilon"]), m["value"], marker="o", ms=3,
                            color=colour[method], label=method)
            metric = sdata["metric"].iloc[0]
            if metric == "coverage":
                ax.axhline(0.95, color="grey", lw=0.5)
            ax.set_title(study, fontsize=9)
            ax.set_xlabel("ln ε")
            ax.set_ylabel(metric, fontsize=8)
            ax.legend(fontsize=6)
        fig.tight_layout()
        path = out / f"{paper}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths


def render(board, ranks, scores, skipped, timings, interface, *, title: str,
           figures: list[str], release_bench: pd.DataFrame | None = None) -> str:
    """The benchmark report in markdown."""
    lines = [f"# {title}", "",
             "Rows: every benchmarked method beside each study's reference methods, on the "
             "study's own data stream and evaluations. Ranks per cell (study, scenario, ε, "
             "metric) among private methods, ties within 2 Monte Carlo SEs; a study's rank by "
             "the mean cell rank; overall score = sum of study ranks (STEPS Table 3's rule; "
             "lower is better). Interval metrics: coverage error |coverage − 0.95|, CI width "
             "and RMSE relative to the original-data method.", ""]
    lines += ["## Overall score", ""]
    if len(scores):
        if "mean_study_rank" not in scores:  # a benchmark collected before the column
            scores = scores.assign(mean_study_rank=np.nan)
        lines.append("Score: the sum of a benchmarked method's study ranks over the studies "
                     "every benchmarked method ran on; reference methods run on their own "
                     "study only, so they have a mean study rank and no score.")
        lines.append("")
        lines.append(_markdown_table(["method", "score", "mean study rank", "studies"],
                                     [[m, _fmt(s), _fmt(r), str(int(n))] for m, s, n, r in
                                      scores[["method", "score", "studies", "mean_study_rank"]]
                                      .itertuples(index=False)]))
    else:
        lines.append("No method was ranked.")
    lines += ["", "## Study ranks", ""]
    if len(ranks):
        wide = ranks.pivot_table(index=["paper", "study"], columns="method",
                                 values="study_rank").reset_index()
        methods = [c for c in wide.columns if c not in ("paper", "study")]
        lines.append(_markdown_table(["paper", "study", *methods],
                                     [[r["paper"], r["study"], *[_fmt(r[m], "g") for m in
                                                                 methods]]
                                      for _, r in wide.iterrows()]))
    lines += ["", "## Data interface", "",
              "How each study's data reached the benchmarked methods (coded columns with their "
              "levels; numeric columns binned over public bounds and decoded uniform within the "
              "bin). A method that ignores the design weights releases records of weight 1.", ""]
    if len(interface):
        lines.append(_markdown_table(list(interface.columns),
                                     [list(map(str, r)) for r in interface.fillna("")
                                      .itertuples(index=False)]))
    lines += ["", "## Relations", "",
              "The neighbour relation of each private method's ledger; rows at one ε compare "
              "methods under the relations shown (add/remove ε-DP implies substitution 2ε-DP).",
              ""]
    rel = board[board["relation"].astype(str) != ""].drop_duplicates(["study", "method"])
    lines.append(_markdown_table(["study", "method", "neighbour relation"],
                                 [[s, m, r] for s, m, r in rel[["study", "method", "relation"]]
                                  .itertuples(index=False)]))
    lines += ["", "## Figures", ""]
    lines += [f"![{Path(f).stem}]({f})" for f in figures]
    lines += ["", "## Findings: does coverage hold?", ""]
    lines += coverage_findings(board, benchmarked(scores))
    lines += ["", "## Mean coverage per study and method", ""]
    cov = board[board["metric"].str.split(":").str[0] == "coverage"]
    if len(cov):
        mean = cov.groupby(["study", "method"])["value"].mean().unstack()
        lines.append(_markdown_table(["study", *mean.columns],
                                     [[s, *[_fmt(v) for v in row]] for s, row in
                                      zip(mean.index, mean.to_numpy(), strict=True)]))
    lines += ["", "## Not run", ""]
    if len(skipped):
        lines.append(_markdown_table(["study", "method", "reason"],
                                     [list(map(str, r)) for r in skipped[["study", "method",
                                                                          "reason"]]
                                      .itertuples(index=False)]))
    else:
        lines.append("Every study took every method.")
    lines += ["", "## Cost", ""]
    if len(timings):
        lines.append(_markdown_table(list(timings.columns),
                                     [list(map(str, r)) for r in timings.itertuples(index=False)]))
    lines += ["", "Cost: seconds of each method's tasks when they ran (one core each) and the "
              "replicates they made. The full leaderboard (one row per study, scenario, ε, "
              "method and metric, per estimand) is `leaderboard.csv` beside a run's report.", ""]
    if release_bench is not None and len(release_bench):
        lines += ["## Cost per release", "",
                  "`harness bench --release=<methods> study=<s>`, one process per study: the "
                  "first release of one replicate (JAX compiles here), the steady-state "
                  "seconds of a single-replicate release, and a task of R replicates as a loop "
                  "of single releases against one vectorised release (its first call, which "
                  "compiles for the batch size, and a second one).", ""]
        cols = ["study", "method", "replicates", "first_s", "steady_s", "loop_task_s",
                "batched_first_s", "batched_task_s", "loop_over_batched"]
        lines.append(_markdown_table(
            ["study", "method", "R", "first (s)", "steady (s/release)", "loop of R (s)",
             "batched, first (s)", "batched (s)", "loop / batched"],
            [[r[0], r[1], str(int(r[2])), *[_fmt(v) for v in r[3:]]]
             for r in release_bench[cols].itertuples(index=False)]))
        lines.append("")
    return "\n".join(lines)


def benchmarked(scores: pd.DataFrame) -> list[str]:
    """The benchmarked methods of a run: those with an overall score (reference methods have
    none, :func:`harness.benchmark.leaderboard.overall_scores`)."""
    if scores is None or not len(scores) or "score" not in scores:
        return []
    return sorted(scores.loc[scores["score"].notna(), "method"].astype(str))


def coverage_holds(board: pd.DataFrame) -> pd.DataFrame:
    """Per interval study and method: the cells (scenario, ε, estimand) whose coverage is not
    below the nominal 0.95 by more than 2 Monte Carlo SEs, as a share of the method's cells."""
    base = board["metric"].astype(str).str.split(":").str[0]
    cov = board[base == "coverage"].copy()
    if cov.empty:
        return pd.DataFrame(columns=["study", "method", "holds", "cells"])
    from .leaderboard import NOMINAL, TIE_MCSE

    cov["holds"] = cov["value"] >= NOMINAL - TIE_MCSE * cov["mcse"].fillna(0.0)
    return (cov.groupby(["study", "method"])["holds"].agg(["mean", "size"]).reset_index()
            .rename(columns={"mean": "holds", "size": "cells"}))


#: a method's coverage "holds" on a study when it holds in at least this share of its cells
HOLDS_SHARE = 0.9


def coverage_findings(board: pd.DataFrame, methods: list[str]) -> list[str]:
    """Where each benchmarked method's intervals keep their coverage and where the papers'
    methods' do (issue 24): per interval study, the share of cells whose coverage is within 2
    MCSE of 0.95 or above, for the benchmarked methods beside the study's private reference
    methods, and one line per benchmarked method naming the studies of each of the four
    cases. Computed from the leaderboard, so no number is typed."""
    holds = coverage_holds(board)
    if holds.empty:
        return ["No interval study in this run."]
    private = set(board.loc[board["relation"].astype(str) != "", "method"].astype(str))
    wide = holds.pivot_table(index="study", columns="method", values="holds")
    refs = [m for m in wide.columns if m in private and m not in methods]
    shown = [m for m in methods if m in wide.columns] + refs
    out = [f"A cell (scenario, ε, estimand) *holds* when its coverage is at least 0.95 minus 2 "
           f"Monte Carlo SEs; a method holds on a study when at least {HOLDS_SHARE:.0%} of its "
           f"cells do. Reference methods: the study's private baselines and the paper's best "
           f"method. Share of cells that hold:", ""]
    out.append(_markdown_table(["study", *shown],
                               [[s, *[_fmt(v, ".0%") for v in row]] for s, row in
                                zip(wide.index, wide[shown].to_numpy(), strict=True)]))
    out.append("")
    best_ref = wide[refs].max(axis=1) if refs else pd.Series(np.nan, index=wide.index)
    for m in methods:
        if m not in wide.columns:
            continue
        mine = wide[m]
        cases = {
            "holds where the papers' methods hold": (mine >= HOLDS_SHARE) &
                                                     (best_ref >= HOLDS_SHARE),
            "holds where none of the papers' methods does": (mine >= HOLDS_SHARE) &
                                                            (best_ref < HOLDS_SHARE),
            "fails where a paper's method holds": (mine < HOLDS_SHARE) &
                                                  (best_ref >= HOLDS_SHARE),
            "fails, as the papers' methods do": (mine < HOLDS_SHARE) & (best_ref < HOLDS_SHARE),
        }
        parts = [f"{label}: {', '.join(mine.index[mask]) or 'none'}"
                 for label, mask in cases.items()]
        out.append(f"- **{m}** " + "; ".join(parts) + ".")
    return out


def render_committed(name: str, root: Path = ROOT) -> Path:
    """``docs/benchmark.md`` from ``results/reference/benchmark/<name>/`` (committed by
    ``harness benchmark ... --collect``)."""
    from ..engine.store import atomic_write_text

    base = root / "results" / "reference" / "benchmark" / name
    if not (base / "leaderboard.csv").exists():
        have = sorted(p.name for p in base.parent.glob("*")) if base.parent.exists() else []
        raise ConfigError(f"benchmark: nothing collected for {name!r} (allowed: "
                          f"{', '.join(have) or 'none; run harness benchmark ... --collect'})")

    def read(f):
        return pd.read_csv(base / f, keep_default_na=True) if (base / f).stat().st_size else \
            pd.DataFrame()

    board = read("leaderboard.csv")
    board["relation"] = board["relation"].fillna("")
    figures = sorted((root / "plots" / "benchmark" / name).glob("*.png"))
    text = render(board, read("study_ranks.csv"), read("scores.csv"), read("skipped.csv"),
                  read("timings.csv"), read("interface.csv"), title=f"Benchmark ({name})",
                  figures=[f"../plots/benchmark/{name}/{f.name}" for f in figures],
                  release_bench=read("release_bench.csv")
                  if (base / "release_bench.csv").exists() else None)
    out = root / "docs" / "benchmark.md"
    atomic_write_text(text, out)
    return out


def run_report_benchmark(argv: list[str], root: Path = ROOT) -> int:
    """``harness report benchmark=<name>``: docs/benchmark.md from the committed files."""
    names = [a.split("=", 1)[1] for a in argv if a.startswith("benchmark=")]
    rest = [a for a in argv if not a.startswith("benchmark=")]
    if rest:
        raise ConfigError(f"report: unexpected {rest[0]!r} with benchmark=<name> (it reads the "
                          f"committed files only)")
    out = render_committed(names[0], root)
    print(f"report: {out.relative_to(root)}")
    return 0
