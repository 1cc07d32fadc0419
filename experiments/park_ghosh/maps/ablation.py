"""The ablations of spec 001 §6 (issue 25 item 5): PeGS and PeGS.rs with the head size m (the
number of leading conditioning features kept exactly in each hash, §3.2) ∈ {1, 2, 3}, PeGS.rs's
block size B ∈ {1, 5, 10, 20, 50}, and the size n ∈ {20,000; 200,000; 1,000,000} of the
original data. The paper runs m = 2, B = 10 and reports no n; it reports none of these
ablations.

Two variant sweeps of ``park_ghosh_maps`` (:class:`harness.paper.Variant`): ``..._ablation_mb``
adds a roster entry per (m, B) setting at the study's n, and ``..._ablation_n`` runs the two
samplers at the three n (``N_REPLICATES``, no bootstrap). PMI (about a minute of GLM fits per
replicate) is left out; the m/B sweep keeps the bootstrap reference as the sampling-noise
floor. [OURS] The scale is small: ``REPLICATES`` replicates (``N_REPLICATES`` for n) at four
decades of the paper's ε grid (``EPSILONS``); the differences the report's findings state are
at least two MCSEs of the difference wide (its ablation tables give each cell's MCSE). No
smaller scale was tried."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.paper import Table, Variant

from .figures import panels

BASE = "park_ghosh_maps"
MB, N = f"{BASE}_ablation_mb", f"{BASE}_ablation_n"
#: spec 001 §6 "ablations"
M_VALUES = (1, 2, 3)
B_VALUES = (1, 5, 10, 20, 50)
N_VALUES = (20_000, 200_000, 1_000_000)
#: [OURS] a decade apart over the paper's grid {0.1, 0.5, 1, 5, 10, 50, 100} (§4.3)
EPSILONS = (0.1, 1, 10, 100)
#: [OURS] the ci profile's count: the ablation tables' MCSEs show it decides the questions
REPLICATES = 5
#: [OURS] the n ablation: one task block of replicates per (method, n) (n = 1,000,000 costs
#: minutes per task on a loaded 2-core machine); no bootstrap (its floor does not depend on n:
#: the m/B sweep shows it at the study's n)
N_REPLICATES = 3
#: the base roster's settings (conf/study/park_ghosh_maps.yaml): m = 2, B = 10
BASE_M, BASE_B = 2, 10
#: the utility and risk metrics the ablation reports (Figs. 5, 6a, 7 and 9a)
METRICS = {"marginal_sum": "marginal distance (sum)", "cond_age_sum": "conditional | age (sum)",
           "reg_linear": "linear regression distance", "mdc_error": "MDC attack error"}
REFS = ("Boot",)


def label(sampler: str, m: int = BASE_M, b: int = BASE_B) -> str:
    """A roster label: the base roster's own label at m = 2 (and B = 10 for PeGS.rs)."""
    if m != BASE_M:
        return f"{sampler}_m{m}"
    if sampler == "PeGS.rs" and b != BASE_B:
        return f"{sampler}_B{b}"
    return sampler


def _entry(sampler: str, m: int, b: int) -> str:
    synth = "pegs" if sampler == "PeGS" else f"pegs_rs,B:{b}"
    return f"{{synthesizer:{synth},n_out:1000,head_size:{m},structure:public}}"


def _settings():
    """(label, sampler, m, B) of every PeGS setting of the m and B ablations."""
    out = [(label(s, m), s, m, BASE_B if s == "PeGS.rs" else np.nan)
           for s in ("PeGS", "PeGS.rs") for m in M_VALUES]
    out += [(label("PeGS.rs", BASE_M, b), "PeGS.rs", BASE_M, b) for b in B_VALUES
            if b != BASE_B]
    return out


SETTINGS = _settings()
_NEW = [(lab, s, m, b) for lab, s, m, b in SETTINGS if lab not in ("PeGS", "PeGS.rs")]
_EPS = f"study.privacy_values=[{','.join(f'{e:g}' for e in EPSILONS)}]"
MB_OVERRIDES = (
    "++study.roster={" + ",".join(f"{lab}:{_entry(s, m, int(b) if b == b else BASE_B)}"
                                for lab, s, m, b in _NEW) + "}",
    f"methods=[{','.join(lab for lab, *_ in SETTINGS)},Boot]",
    _EPS, f"study.replicates.paper={REPLICATES}")
N_OVERRIDES = (f"study.grid.n=[{','.join(str(n) for n in N_VALUES)}]",
               "methods=[PeGS,PeGS.rs]", _EPS, f"study.replicates.paper={N_REPLICATES}")


def ablation_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per n, setting and ε (and the bootstrap reference): the metrics of ``METRICS``, each
    as mean ± MCSE over replicates, with the setting's sampler, m and B."""
    info = {lab: (s, m, b) for lab, s, m, b in SETTINGS}
    mx = metrics[metrics["metric"].isin(list(METRICS))]
    mx = mx.assign(cell=[f"{v:.4g} ± {s:.2g}" for v, s in zip(mx["value"], mx["mcse"],
                                                                strict=True)],
                   order=mx["privacy"].fillna(-1.0))
    t = mx.pivot_table(index=["n", "method", "order"], columns="metric", values="cell",
                       aggfunc="first").reset_index()
    t["sampler"] = [info.get(m, (m,))[0] for m in t["method"]]
    t["m"] = [info[m][1] if m in info else np.nan for m in t["method"]]
    t["B"] = [info[m][2] if m in info else np.nan for m in t["method"]]
    t["epsilon_sample"] = [f"{o:g}" if o >= 0 else "reference" for o in t["order"]]
    t = t.sort_values(["n", "sampler", "m", "B", "order"], kind="stable")
    cols = [c for c in METRICS if c in t.columns]
    return t[["n", "method", "sampler", "m", "B", "epsilon_sample", *cols]].reset_index(
        drop=True)


def _figure(methods, title: str):
    def draw(mx):
        sub = mx[mx["method"].isin([*methods, *REFS])]
        return panels(sub, METRICS, title, methods=methods)
    return draw


def figure_n(mx):
    sub = mx[mx["method"].isin(["PeGS", "PeGS.rs"])].copy()
    sub["method"] = [f"{m} n={n:,}" for m, n in zip(sub["method"], sub["n"], strict=True)]
    methods = [f"{s} n={n:,}" for s in ("PeGS", "PeGS.rs") for n in N_VALUES]
    return panels(sub.drop(columns="n"), METRICS,
                  "Park & Ghosh ablation: the size n of the original data", methods=methods)


TABLES = {"ablation": Table(ablation_table, reads=("metrics",))}
VARIANTS = {
    MB: Variant(base=BASE, overrides=MB_OVERRIDES, tables=TABLES, figures={
        "ablation_m": _figure([label(s, m) for s in ("PeGS", "PeGS.rs") for m in M_VALUES],
                              "Park & Ghosh ablation: the head size m"),
        "ablation_B": _figure([label("PeGS.rs", BASE_M, b) for b in B_VALUES],
                              "Park & Ghosh ablation: PeGS.rs's block size B")}),
    N: Variant(base=BASE, overrides=N_OVERRIDES, tables=TABLES, figures={"ablation_n": figure_n}),
}
