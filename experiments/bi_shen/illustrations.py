"""The paper's illustrations of the method, drawn from samples run through the harness's DIP
(main text Figures 1 and 2; §2.1, eq. (1); App. S1.3, eq. (3)–(4)).

* Figure 1, the flowchart: n draws Z from a known F, and the stages of known-F DIP as
  :func:`harness.synthesizers.dip.known_stages` computes them: F(Z) (uniform), F(Z) + e with
  e ~ Laplace(0, 1/ε) (its law has the CDF G of U + e,
  :func:`harness.synthesizers.dip_transform.uniform_laplace_cdf`) and Z̃ = F⁻¹(G(F(Z) + e)),
  which has law F. Tables: ``flowchart_hist`` (each stage's histogram density beside the exact
  mean density of its law over the bin) and ``flowchart_ks`` (each stage's one-sample KS distance
  to its law, and Z̃'s two-sample distance to Z).
* Figure 2, continualization: n draws Z from Bernoulli(P1), V = Z − U by
  :func:`harness.synthesizers.dip_transform.continualize` on the public support {0, 1} (a_0 =
  −1), and Z̃ by known-F DIP (the randomized PIT, which is F_V of V). Tables: ``bernoulli_pmf``
  (P(Z = a), the shares of Z and of Z̃), ``bernoulli_density`` (V's histogram density beside
  the exact one: 1 − P1 on (−1, 0], P1 on (0, 1]) and ``bernoulli_cdf`` (F and F_V, exact and
  empirical, on a grid; F_V is linear between the support points and equals F on them).
* The two-dimensional cube illustration (App. S1.6): :mod:`experiments.bi_shen.cube`.

The paper gives neither F for Figure 1 ("an arbitrary distribution") nor P1 or ε: F is S2's
Exp(1) (``conf/study/bi_shen_s2.yaml``; unbounded, where the paper says linear mechanisms
fail), P1 is S1's Bernoulli's (``conf/study/bi_shen_s1.yaml``), ε = 1 and n, bins and grid are
ours (``SETTINGS``). Seeds derive from the root seed (:func:`harness.rng.generator`, streams
named after this computation). ``harness report paper=bi_shen --studies=bi_shen_illustrations``
collects it (``paper.py``); its figures are drawn from the tables alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from harness import config
from harness.engine.study import load_study
from harness.privacy.ledger import PrivacyLedger
from harness.rng import generator
from harness.synthesizers.dip import known_stages
from harness.synthesizers.dip_transform import ColumnKind, continualize, uniform_laplace_cdf

from . import cube
from .tables import tidy

NAME = "bi_shen_illustrations"
SETTINGS = {
    "seed": 0, "epsilon": 1.0, "n": 5000,
    # the known F of Figure 1 and the Bernoulli of Figure 2: entries of the studies' configs
    "flowchart": {"study": "bi_shen_s2", "dist": "exponential"},
    "bernoulli": {"study": "bi_shen_s1", "dist": "bernoulli"},
    # histogram bins of Figure 1's stages (each over its sample's central 99 %), and Figure 2's
    # bins per unit and grid points per unit over (a_0 − 1/2, a_s + 1/2)
    "bins": 40, "tail": 0.005, "bins_per_unit": 10, "grid_per_unit": 100,
    # the cube illustration (experiments/bi_shen/cube.py): records privatized, grid points of
    # its conditional CDF and released records shown in its scatter
    "cube_n": 2000, "cube_grid": 100, "cube_shown": 500,
}
STAGES = ("original", "uniform", "noisy", "privatized")
#: the paper's colours: red non-private, green private (Figure 1); orange masses, blue
#: densities and CDFs (Figure 2)
RED, GREEN, ORANGE, BLUE = "tab:red", "tab:green", "tab:orange", "tab:blue"
PRIVATE = {"original": False, "uniform": False, "noisy": True, "privatized": True}


def _distribution(entry: dict):
    study = load_study(config.load([f"study={entry['study']}", "profile=paper"])["study"])
    return study.distribution(entry["dist"])


def _stages(dist, settings) -> tuple[np.ndarray, object]:
    """The original sample Z and the :class:`~harness.synthesizers.dip.KnownStages` of its DIP."""
    n, eps = int(settings["n"]), float(settings["epsilon"])
    z = dist.rvs(size=n, random_state=generator(settings["seed"], NAME, "data", dist.dist.name))
    rng = generator(settings["seed"], NAME, "dip", dist.dist.name)
    return z.astype(float), known_stages(dist, z.astype(float), eps, rng, PrivacyLedger())


# ----------------------------------------------------------------------------- Figure 1


def flowchart_tables(dist, settings) -> dict[str, pd.DataFrame]:
    from scipy import stats  # at call time: the paper's module is loaded by every report command

    z, st = _stages(dist, settings)
    b = 1.0 / float(settings["epsilon"])
    samples = {"original": z, "uniform": st.u, "noisy": st.noisy, "privatized": st.released}
    cdfs = {"original": dist.cdf, "uniform": stats.uniform.cdf,
            "noisy": lambda x: uniform_laplace_cdf(x, b), "privatized": dist.cdf}
    laws = {"original": "F", "uniform": "Unif(0, 1)", "noisy": "G", "privatized": "F"}
    tail = float(settings["tail"])
    hist, ks = [], []
    for stage in STAGES:
        x = samples["original" if stage == "privatized" else stage]  # Z̃ on Z's bins
        edges = np.linspace(*np.quantile(x, [tail, 1.0 - tail]), int(settings["bins"]) + 1)
        counts = np.histogram(samples[stage], edges)[0]
        width = np.diff(edges)
        hist.append(pd.DataFrame({
            "stage": stage, "bin_left": edges[:-1], "bin_right": edges[1:], "count": counts,
            "density": counts / (x.size * width),
            "exact_density": np.diff(cdfs[stage](edges)) / width}))
        test = stats.kstest(samples[stage], cdfs[stage])
        ks.append({"stage": stage, "law": laws[stage], "private": PRIVATE[stage],
                   "n": x.size, "ks": test.statistic, "p_value": test.pvalue})
    two = stats.ks_2samp(st.released, z)
    ks.append({"stage": "privatized_vs_original", "law": "the sample Z", "private": True,
               "n": z.size, "ks": two.statistic, "p_value": two.pvalue})
    return {"flowchart_hist": pd.concat(hist, ignore_index=True),
            "flowchart_ks": pd.DataFrame(ks)}


# ----------------------------------------------------------------------------- Figure 2


def support_kind(dist) -> ColumnKind:
    """The public support {0, 1, …, max} of a discrete F with finite support (a_0 = −1)."""
    lo, hi = dist.support()
    return ColumnKind("discrete", tuple(float(a) for a in range(int(lo), int(hi) + 1)))


def continualized_cdf(dist, kind: ColumnKind, x) -> np.ndarray:
    """The exact F_V(x) of V = Z − U·(a_k − a_{k−1}) (eq. (3), Lemma S1): F(a_{k−1}) plus
    P(Z = a_k)·(x − a_{k−1})/(a_k − a_{k−1}) on (a_{k−1}, a_k]; 0 below a_0, 1 above a_s."""
    x = np.asarray(x, dtype=float)
    points = np.asarray((kind.lower_end, *kind.support))
    k = np.clip(np.searchsorted(points, x, side="left"), 1, points.size - 1)
    lo, hi = points[k - 1], points[k]
    inside = dist.cdf(lo) + dist.pmf(hi) * np.clip((x - lo) / (hi - lo), 0.0, 1.0)
    return np.where(x <= points[0], 0.0, np.where(x > points[-1], 1.0, inside))


def continualization_tables(dist, settings) -> dict[str, pd.DataFrame]:
    z, st = _stages(dist, settings)
    kind = support_kind(dist)
    v = continualize(z, kind, generator(settings["seed"], NAME, "continualize"))
    support = np.asarray(kind.support)
    pmf = pd.DataFrame({
        "value": support, "pmf": dist.pmf(support),
        "original_share": [(z == a).mean() for a in support],
        "privatized_share": [(st.released == a).mean() for a in support], "n": z.size})
    lo, hi = kind.lower_end - 0.5, support[-1] + 0.5
    edges = np.linspace(lo, hi, int(round((hi - lo) * settings["bins_per_unit"])) + 1)
    counts = np.histogram(v, edges)[0]
    width = np.diff(edges)
    density = pd.DataFrame({
        "bin_left": edges[:-1], "bin_right": edges[1:], "count": counts,
        "density": counts / (v.size * width),
        "exact_density": np.diff(continualized_cdf(dist, kind, edges)) / width})
    x = np.linspace(lo, hi, int(round((hi - lo) * settings["grid_per_unit"])) + 1)
    cdf = pd.DataFrame({
        "x": x, "cdf_z": dist.cdf(x), "ecdf_z": np.searchsorted(np.sort(z), x, "right") / z.size,
        "cdf_v": continualized_cdf(dist, kind, x),
        "ecdf_v": np.searchsorted(np.sort(v), x, "right") / v.size})
    return {"bernoulli_pmf": pmf, "bernoulli_density": density, "bernoulli_cdf": cdf}


def make_tables(settings=SETTINGS, log=print) -> dict[str, pd.DataFrame]:
    """The tables of both figures (module docstring), floats to 5 significant digits."""
    tables = {**flowchart_tables(_distribution(settings["flowchart"]), settings),
              **continualization_tables(_distribution(settings["bernoulli"]), settings),
              **cube.tables(settings, NAME)}
    log(f"{NAME}: {len(tables)} tables")
    return {name: tidy(t) for name, t in tables.items()}


# ----------------------------------------------------------------------------- figures

TITLES = {"original": ("(1) sample Z ~ F", "z"),
          "uniform": ("(2) F(Z) ~ Unif(0, 1)", "F(z)"),
          "noisy": ("(3) F(Z) + e, density G′", "F(z) + e"),
          "privatized": ("(4) Z̃ = F⁻¹(G(F(Z) + e)) ~ F", "z̃")}
LAW_LABEL = {"original": "density of F", "uniform": "Unif(0, 1)", "noisy": "G′ (U + Laplace)",
             "privatized": "density of F"}


def flowchart(tables) -> Figure:
    """Figure 1: one panel per stage, the sample's histogram filled red (non-private) or green
    (private) and its law's density as a black line."""
    hist = tables["flowchart_hist"]
    fig = Figure(figsize=(12.0, 3.0))
    axes = fig.subplots(1, len(STAGES))
    for ax, stage in zip(axes, STAGES, strict=True):
        h = hist[hist["stage"] == stage]
        colour = GREEN if PRIVATE[stage] else RED
        ax.bar(h["bin_left"], h["density"], width=h["bin_right"] - h["bin_left"], align="edge",
               color=colour, alpha=0.55, label="private sample" if PRIVATE[stage]
               else "non-private sample")
        mid = (h["bin_left"] + h["bin_right"]) / 2
        ax.plot(mid, h["exact_density"], color="black", lw=1.2, label=LAW_LABEL[stage])
        title, xlabel = TITLES[stage]
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.legend(fontsize=7, loc="best")
    axes[0].set_ylabel("density")
    fig.tight_layout()
    return fig


def continualization(tables) -> Figure:
    """Figure 2 (a–d): the pmf of Z (with the shares of Z and of its DIP release Z̃), V's
    density, the CDF of Z and the CDF of V."""
    pmf, dens, cdf = tables["bernoulli_pmf"], tables["bernoulli_density"], tables["bernoulli_cdf"]
    fig = Figure(figsize=(9.0, 6.4))
    (a, b), (c, d) = fig.subplots(2, 2)
    a.vlines(pmf["value"], 0, pmf["pmf"], color=ORANGE, lw=1)
    a.plot(pmf["value"], pmf["pmf"], "o", color=ORANGE, label="P(Z = a)")
    a.plot(pmf["value"] - 0.05, pmf["original_share"], "s", color=RED, ms=4,
           label="share in the sample Z")
    a.plot(pmf["value"] + 0.05, pmf["privatized_share"], "^", color=GREEN, ms=4,
           label="share in the DIP release Z̃")
    p1 = float(pmf.loc[pmf["value"] == 1.0, "pmf"].iloc[0])
    a.set(title=f"(a) Z ~ Bernoulli(P1), P1 = {p1:g}", xlabel="a", ylabel="probability",
          ylim=(0, 1.05))
    a.set_xticks(pmf["value"])
    b.bar(dens["bin_left"], dens["density"], width=dens["bin_right"] - dens["bin_left"],
          align="edge", color=ORANGE, alpha=0.45, label="histogram of V")
    b.step(np.r_[dens["bin_left"], dens["bin_right"].iloc[-1]],
           np.r_[dens["exact_density"], 0.0], where="post", color=BLUE, lw=1.2,
           label="pdf of V")
    b.set(title="(b) V = Z − U", xlabel="v", ylabel="density")
    c.plot(cdf["x"], cdf["cdf_z"], color=BLUE, lw=1.2, drawstyle="steps-post", label="F")
    c.plot(cdf["x"], cdf["ecdf_z"], color=RED, lw=0.8, ls="--", drawstyle="steps-post",
           label="ECDF of the sample Z")
    c.set(title="(c) CDF of Z", xlabel="z", ylabel="F(z)")
    d.plot(cdf["x"], cdf["cdf_v"], color=ORANGE, lw=1.4, label="F_V")
    d.plot(cdf["x"], cdf["ecdf_v"], color=BLUE, lw=0.8, ls="--", label="ECDF of V")
    d.plot(pmf["value"], pmf["pmf"].cumsum(), "o", color=BLUE, ms=4,
           label="F at the support")
    d.set(title="(d) CDF of V", xlabel="v", ylabel="F_V(v)")
    for ax in (a, b, c, d):
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


FIGURES = {"figure_1_flowchart": flowchart, "figure_2_continualization": continualization,
           "figure_cube": cube.figure}
