"""The paper's two-dimensional illustration of the hold-out cubes (App. S1.6, eq. (8)–(9); the
figure "new_2d_continualization"), drawn from a release of the harness's hold-out DIP
(:func:`harness.synthesizers.dip.privatize_holdout`).

The hold-out Z* has the paper's five points (d11, d23), (d12, d21), (d13, d25), (d14, d22),
(d15, d24) [ours: d_jk = k and d_j0 = 0, the ``zero`` rule of d_0]. Each spreads its mass 1/5
uniformly over its bottom-left cell (d_1,k−1, d_1k] × (d_2,l−1, d_2l]; Ĉ is the CDF of that
mixture. Records drawn from Ĉ (a hold-out row at random, then uniform in its cell) are
privatized by the harness's DIP at ε, so the release has law Ĉ (Thm 1 with Ĉ as the reference),
and a released record whose first coordinate lies in (d12, d13] has its second in (d24, d25],
uniformly: the conditional Ĉ(x2 | x1) of the paper's panel (c).

Tables: ``cube_cells`` (each hold-out row, its ranks and its cell, from the knots of
:func:`harness.synthesizers.dip_transform.ecdf_knots`), ``cube_values`` (F̂ and Ĉ at the
paper's two points: exact, from the release, and the paper's values), ``cube_conditional``
(the released second coordinates given the first in (d12, d13]: their ECDF on a grid beside the
uniform CDF on (d24, d25]) and ``cube_release`` (the first released records, for the scatter)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from harness.privacy.ledger import PrivacyLedger
from harness.rng import generator
from harness.synthesizers.dip import column_orders, privatize_holdout
from harness.synthesizers.dip_transform import ColumnKind, ecdf_knots

#: the paper's hold-out: (rank in x1, rank in x2) of its five points, d_1k and d_2l
HOLDOUT_RANKS = ((1, 3), (2, 1), (3, 5), (4, 2), (5, 4))
#: the paper's values (App. S1.6): F̂ and Ĉ at (d11, d23) and at (d11/2, d23)
PAPER_VALUES = {"(d11,d23)": {"F_hat": 0.2, "C_hat": 0.2},
                "(d11/2,d23)": {"F_hat": 0.0, "C_hat": 0.1}}
#: the conditional of panel (c): x1 in the cell of rank 3, whose row's x2 cell has rank 5
GIVEN_RANK = 3
RED, GREEN, ORANGE = "tab:red", "tab:green", "tab:orange"


def holdout() -> np.ndarray:
    """The hold-out (5, 2) at d_jk = k."""
    return np.asarray(HOLDOUT_RANKS, dtype=float)


def cells(knots: np.ndarray, z: np.ndarray) -> pd.DataFrame:
    """Each hold-out row's ranks and its cell (lo, hi] per column, from the knots (2, m + 1)."""
    ranks = np.argsort(np.argsort(z, axis=0), axis=0) + 1
    rows = []
    for q, (r1, r2) in enumerate(ranks):
        rows.append({"row": q + 1, "x1": z[q, 0], "x2": z[q, 1], "rank1": r1, "rank2": r2,
                     "lo1": knots[0, r1 - 1], "hi1": knots[0, r1],
                     "lo2": knots[1, r2 - 1], "hi2": knots[1, r2]})
    return pd.DataFrame(rows)


def cube_cdf(cell: pd.DataFrame, x1: float, x2: float) -> float:
    """Ĉ(x1, x2): each row's mass 1/m times the share of its cell below (x1, x2)."""
    f1 = np.clip((x1 - cell["lo1"]) / (cell["hi1"] - cell["lo1"]), 0, 1)
    f2 = np.clip((x2 - cell["lo2"]) / (cell["hi2"] - cell["lo2"]), 0, 1)
    return float((f1 * f2).mean())


def draw_from_cubes(cell: pd.DataFrame, n: int, rng) -> np.ndarray:
    """n records from Ĉ: a hold-out row at random, then uniform in its cell."""
    q = rng.integers(len(cell), size=n)
    lo = cell[["lo1", "lo2"]].to_numpy()[q]
    hi = cell[["hi1", "hi2"]].to_numpy()[q]
    return lo + rng.random((n, 2)) * (hi - lo)


def tables(settings, name: str) -> dict[str, pd.DataFrame]:
    z = holdout()
    knots = ecdf_knots(z.T, "zero")  # (2, m + 1): d_j0 = 0, d_j1, …, d_jm
    cell = cells(knots, z)
    n, eps = int(settings["cube_n"]), float(settings["epsilon"])
    x = draw_from_cubes(cell, n, generator(settings["seed"], name, "cube", "data"))
    released, _ = privatize_holdout(
        x[None], z[None], (ColumnKind(), ColumnKind()), eps,
        generator(settings["seed"], name, "cube", "dip"), PrivacyLedger(),
        column_orders("given", 2, 1, None), d0="zero")
    rel = released[0]
    d11, d23 = knots[0, 1], knots[1, 3]
    values = []
    for label, (p1, p2) in {"(d11,d23)": (d11, d23), "(d11/2,d23)": (d11 / 2, d23)}.items():
        values.append({"point": label, "x1": p1, "x2": p2,
                       "F_hat": float(((z[:, 0] <= p1) & (z[:, 1] <= p2)).mean()),
                       "C_hat": cube_cdf(cell, p1, p2),
                       "C_hat_release": float(((rel[:, 0] <= p1) & (rel[:, 1] <= p2)).mean()),
                       "paper_F_hat": PAPER_VALUES[label]["F_hat"],
                       "paper_C_hat": PAPER_VALUES[label]["C_hat"], "n": n})
    row = cell[cell["rank1"] == GIVEN_RANK].iloc[0]
    given = rel[(rel[:, 0] > row["lo1"]) & (rel[:, 0] <= row["hi1"]), 1]
    grid = np.linspace(0.0, knots[1, -1], int(settings["cube_grid"]) + 1)
    conditional = pd.DataFrame({
        "x2": grid, "ecdf": np.searchsorted(np.sort(given), grid, "right") / given.size,
        "cdf": np.clip((grid - row["lo2"]) / (row["hi2"] - row["lo2"]), 0, 1),
        "records": given.size, "lo2": row["lo2"], "hi2": row["hi2"]})
    shown = int(settings["cube_shown"])
    return {"cube_cells": cell, "cube_values": pd.DataFrame(values),
            "cube_conditional": conditional,
            "cube_release": pd.DataFrame({"x1": rel[:shown, 0], "x2": rel[:shown, 1]})}


def _knot_names(j: int, m: int) -> list[str]:
    """The paper's names d_j1, …, d_jm of column j's knots (tick labels)."""
    return [f"d{j}{k}" for k in range(1, m + 1)]


def figure(tables) -> Figure:
    """(a) the hold-out and F̂ at the paper's two points; (b) the cells (orange), the hold-out
    (red) and released records (green), the band x1 ∈ (d12, d13] dashed; (c) the conditional CDF
    of the released x2 given x1 in that band beside the uniform on (d24, d25]."""
    cell, vals = tables["cube_cells"], tables["cube_values"]
    cond, rel = tables["cube_conditional"], tables["cube_release"]
    top = float(cell[["hi1", "hi2"]].to_numpy().max())
    fig = Figure(figsize=(12.0, 3.8))
    a, b, c = fig.subplots(1, 3)
    for ax in (a, b):
        ax.set(xlim=(0, top + 0.3), ylim=(0, top + 0.3), xlabel="x1", ylabel="x2")
        ax.set_xticks(cell["hi1"].sort_values(), _knot_names(1, len(cell)))
        ax.set_yticks(cell["hi2"].sort_values(), _knot_names(2, len(cell)))
    a.plot(cell["x1"], cell["x2"], "o", color=RED, label="hold-out Z*")
    for i, v in vals.iterrows():  # the labels above and below their points
        a.plot(v["x1"], v["x2"], "x", color="black", ms=7)
        a.annotate(f"{v['point']}: F̂ = {v['F_hat']:g}, Ĉ = {v['C_hat']:g}",
                   (v["x1"], v["x2"]), textcoords="offset points",
                   xytext=(4, 8) if i % 2 == 0 else (-6, -14), fontsize=7)
        a.plot([0, v["x1"], v["x1"]], [v["x2"], v["x2"], 0], color="black", lw=0.5, ls=":")
    a.plot([], [], "x", color="black", label="the paper's points")
    a.set_title("(a) hold-out and its empirical CDF F̂", fontsize=9)
    for _, r in cell.iterrows():
        b.add_patch(Rectangle((r["lo1"], r["lo2"]), r["hi1"] - r["lo1"], r["hi2"] - r["lo2"],
                              color=ORANGE, alpha=0.3, lw=0))
    b.plot(rel["x1"], rel["x2"], ".", color=GREEN, ms=2, label="DIP release")
    b.plot(cell["x1"], cell["x2"], "o", color=RED, label="hold-out Z*")
    given = cell[cell["rank1"] == GIVEN_RANK].iloc[0]
    for x in (given["lo1"], given["hi1"]):
        b.axvline(x, color="black", ls="--", lw=0.8)
    b.add_patch(Rectangle((0, 0), 0, 0, color=ORANGE, alpha=0.3, label="cells of Ĉ"))
    b.set_title("(b) mass spread over bottom-left cells", fontsize=9)
    c.plot(cond["x2"], cond["cdf"], color="black", lw=1.2, label="Ĉ(x2 | x1), exact")
    c.plot(cond["x2"], cond["ecdf"], color=GREEN, ls="--", lw=1.0,
           label="ECDF of released x2")
    c.set(xlabel="x2", ylabel="conditional CDF")
    c.set_xticks([0.0, *cell["hi2"].sort_values()], ["0", *_knot_names(2, len(cell))])
    c.set_title("(c) x2 given x1 in (d12, d13]", fontsize=9)
    for ax in (a, b, c):
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig
