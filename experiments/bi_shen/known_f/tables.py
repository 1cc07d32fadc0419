"""Tables of the known-F studies S1 and S2. The paper's appendix tables are missing from the
text (spec §5.4), so each study prints its full grid (ours, with SDs and the improvement of DIP
over each competitor, 100·(competitor − DIP)/DIP) and a table of the ranges the paper quotes
in its prose beside our ranges over the same situations."""

from __future__ import annotations

import pandas as pd

from harness.paper import Table

from ..paper_numbers import S1_IMPROVEMENT_PCT, S2_IMPROVEMENT_PCT, S2_QUOTED
from ..tables import cells, tidy

METRIC = {"s1": "abs_mean_error", "s2": "ks_x1000"}


def grid(metrics: pd.DataFrame, metric: str, realised: bool = False,
         keys: tuple[str, ...] = ("dist",)) -> pd.DataFrame:
    """Per (``keys``, ε, method): our mean, SD, MCSE and DIP's improvement over the method (%);
    with ``realised``, the release's realised ε beside the swept ε (EXM spends n·ε, .exm)."""
    c = cells(metrics, metric, list(keys), realised=realised)
    on = [*keys, "epsilon"]
    dip = c[c["method"] == "DIP"][[*on, "value"]].rename(columns={"value": "dip"})
    out = c.merge(dip, on=on)
    out["dip_improvement_pct"] = 100 * (out["value"] - out["dip"]) / out["dip"]
    order = {m: i for i, m in enumerate(dict.fromkeys(metrics["method"]))}
    out = out.assign(_o=out["method"].map(order)).sort_values([*on, "_o"])
    return out.drop(columns=["dip", "_o"]).rename(columns={"value": "ours", "sd": "ours_sd"})


def s1_grid(metrics):
    return grid(metrics, METRIC["s1"], realised=True)


def s2_grid(metrics):
    return grid(metrics, METRIC["s2"])


def ranges(g: pd.DataFrame, quoted_values: dict, quoted_impr: dict) -> pd.DataFrame:
    rows = []
    for method, part in g.groupby("method", sort=False):
        q = quoted_values.get(method, (None, None))
        qi = quoted_impr.get(method, (None, None))
        rows.append({"method": method, "ours_min": part["ours"].min(),
                     "ours_max": part["ours"].max(), "paper_min": q[0], "paper_max": q[1],
                     "ours_improvement_min_pct": part["dip_improvement_pct"].min(),
                     "ours_improvement_max_pct": part["dip_improvement_pct"].max(),
                     "paper_improvement_min_pct": qi[0], "paper_improvement_max_pct": qi[1]})
    return pd.DataFrame(rows)


def s2_quoted(metrics):
    """Our KS×10³ range over the 16 situations beside the range the paper quotes (§5.4)."""
    return ranges(s2_grid(metrics), S2_QUOTED, S2_IMPROVEMENT_PCT)


def s1_quoted(metrics):
    """Our range of DIP's improvement over each competitor beside the paper's one quoted range
    over all competitors (34.8 %–1874.7 %; §5.4); the paper prints no error values."""
    g = s1_grid(metrics)
    impr = {m: S1_IMPROVEMENT_PCT for m in g["method"].unique() if m not in ("NP", "DIP")}
    return ranges(g, {}, impr)


S1_TABLES = {"grid": Table(lambda mx: tidy(s1_grid(mx)), reads=("metrics",)),
             "quoted_ranges": Table(lambda mx: tidy(s1_quoted(mx)), reads=("metrics",))}
S2_TABLES = {"grid": Table(lambda mx: tidy(s2_grid(mx)), reads=("metrics",)),
             "quoted_ranges": Table(lambda mx: tidy(s2_quoted(mx)), reads=("metrics",))}
