"""``harness benchmark ... --merge=NAME``: add a run's benchmarked methods on some studies to a
committed benchmark (``results/reference/benchmark/<NAME>/``) without re-running its other
studies, with the leaderboard a full run would have given.

Why it can: a rank is decided within one cell (study, scenario, ε, metric) from the values and
Monte Carlo SEs of the methods in that cell (:func:`.leaderboard.rank_cells`), and a study's
rank of a method from its cells only; the other studies' rows, cell ranks and study ranks do
not depend on the merged study. What changes is the merged studies' rows (re-ranked with the
new methods), their study ranks and the overall scores (recomputed from every study's ranks).

Where it can: a metric study, whose committed rows are its declared headline metrics, one row
per cell (``cells`` = 1: nothing was averaged over estimands when the benchmark was
collected), so the committed rows are the rows ranked. Before merging, the committed rows of
each merged study are ranked again and must give the committed ranks (the values are
committed to 6 significant digits; a tie that rounding moved would show here and stop the
merge). An interval study (rows averaged over estimands) is not mergeable: re-run it with all
its methods and ``--collect``.

The run's rows of its benchmarked methods replace those methods' rows on the merged studies;
every other method's rows there (the reference methods, other benchmarked methods) stay the
committed ones. ``skipped.csv`` loses the merged pairs, ``timings.csv`` and ``interface.csv``
take the run's rows for them, and the figures of the merged studies' papers are redrawn.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..report import ROOT
from . import leaderboard as lb

#: the committed leaderboard's order (the groupby keys of :func:`.leaderboard.summarise`)
ORDER = ["paper", "study", "scenario", "epsilon", "relation", "method", "metric"]


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame()


def _directed(rows: pd.DataFrame, study: str, headline: dict) -> pd.DataFrame:
    """``rows`` of a metric study with the direction of each headline metric; any other
    metric (an interval study's) is refused."""
    other = sorted(set(rows["metric"]) - set(headline))
    if other:
        raise ConfigError(f"--merge: study {study} has rows of {', '.join(other)}, not only "
                          f"its headline metrics; re-run it with all its methods and --collect")
    return rows.assign(direction=rows["metric"].map(headline))


def _in_place(frame: pd.DataFrame, rows: pd.DataFrame, studies, keys: list[str]):
    """``frame`` with its rows of ``studies`` replaced by ``rows`` (sorted by ``keys``) where
    the first of them stood (a study's rows are one block of a committed file; the other
    rows keep their committed order and bits); a study new to ``frame`` goes last."""
    rows = rows.sort_values(keys, kind="stable", na_position="last")
    hit = frame["study"].isin(studies).to_numpy() if len(frame) else np.zeros(0, bool)
    at = int(np.argmax(hit)) if hit.any() else len(frame)
    rest = frame[~hit]
    before = int((~hit[:at]).sum())
    return pd.concat([rest.iloc[:before], rows, rest.iloc[before:]], ignore_index=True)


def merge(out: Path, name: str, methods: list[str], headlines: dict[str, dict],
          root: Path = ROOT) -> Path:
    """Merge the run in ``out`` (its full ``leaderboard.csv``, ``timings.csv``,
    ``interface.csv``) of ``methods`` into the committed benchmark ``name``; ``headlines``:
    study → its declared headline metrics (name → lower | higher). See the module
    docstring."""
    from .report import draw_figures

    dest = root / "results" / "reference" / "benchmark" / name
    if not (dest / "leaderboard.csv").exists():
        raise ConfigError(f"--merge: no committed benchmark {name!r} under {dest.parent}")
    old = {f: _read(dest / f) for f in lb.FILES}
    new = pd.read_csv(out / "leaderboard.csv")
    new = new[new["method"].isin(methods)]
    studies = sorted(new["study"].unique())
    if not studies:
        raise ConfigError(f"--merge: the run has no rows of {', '.join(methods)} to merge")
    board = old["leaderboard.csv"]
    board["relation"] = board["relation"].fillna("")
    scores = old["scores.csv"]
    focus = set(scores.loc[scores["score"].notna(), "method"]) | set(methods)
    parts = []
    for study in studies:
        committed = board[board["study"] == study]
        if len(committed) and (committed["cells"] != 1).any():
            raise ConfigError(f"--merge: study {study}'s committed rows are averaged over "
                              f"estimands; re-run it with all its methods and --collect")
        headline = headlines.get(study) or {}
        rows = _directed(committed.drop(columns="cells"), study, headline)
        again = lb.rank_cells(rows, focus)["rank"].to_numpy(dtype=float)
        if not np.allclose(again, rows["rank"].to_numpy(dtype=float), equal_nan=True):
            raise ConfigError(f"--merge: the committed rows of {study} do not give their "
                              f"committed ranks again (values rounded at a tie); re-run the "
                              f"study with all its methods and --collect")
        fresh = _directed(new[new["study"] == study].assign(
            relation=new["relation"].fillna("")), study, headline)
        parts += [rows[~rows["method"].isin(methods)], fresh]
    ranked = lb.rank_cells(pd.concat(parts, ignore_index=True), focus)
    merged = _in_place(board, lb.summarise(ranked[lb.COLUMNS]), studies, ORDER)
    ranks = old["study_ranks.csv"]
    ranks = pd.concat([ranks[~ranks["study"].isin(studies)], lb.study_ranks(ranked)],
                      ignore_index=True).sort_values(["paper", "study", "method"],
                                                     kind="stable")
    pairs = {(s, m) for s, m in new[["study", "method"]].itertuples(index=False)}

    def merged_pair(frame: pd.DataFrame) -> np.ndarray:
        """Which rows of ``frame`` belong to a (study, method) pair of the run."""
        return np.array([(s, m) in pairs for s, m in
                         frame[["study", "method"]].itertuples(index=False)], dtype=bool)

    def without(frame: pd.DataFrame) -> pd.DataFrame:
        return frame if frame.empty else frame[~merged_pair(frame)]

    run_timings = _read(out / "timings.csv")
    ran = merged_pair(run_timings)
    kept = without(old["timings.csv"])
    timings = _in_place(kept, pd.concat([kept[kept["study"].isin(studies)], run_timings[ran]]),
                        studies, ["study", "method"])
    run_interface = _read(out / "interface.csv")
    interface = _in_place(old["interface.csv"],
                          run_interface[run_interface["study"].isin(studies)], studies,
                          ["study"])
    merged.to_csv(dest / "leaderboard.csv", index=False, float_format="%.6g")
    ranks.to_csv(dest / "study_ranks.csv", index=False)
    lb.overall_scores(ranks, focus).to_csv(dest / "scores.csv", index=False)
    without(old["skipped.csv"]).to_csv(dest / "skipped.csv", index=False)
    timings.to_csv(dest / "timings.csv", index=False)
    interface.to_csv(dest / "interface.csv", index=False)
    papers = set(merged.loc[merged["study"].isin(studies), "paper"])
    plots = root / "plots" / "benchmark" / name
    draw_figures(merged, plots, papers=papers)
    print(f"merged {', '.join(methods)} on {', '.join(studies)} into {dest.relative_to(root)}")
    return dest
