"""The vectorised Simulation 2 (``harness.synthesizers``, ``harness.histograms``,
``harness.inference``) agrees in distribution with the record-level per-replicate loop written
from the paper's text (``experiments.bowen_liu.sim2.loop``), for every method, at
(asym, n = 40, σ² = 4) and (sym, n = 100, σ² = 1), ln ε ∈ {−2, 1}, for μ and σ².

Per cell and estimand, R_VEC vectorised and R_LOOP loop replicates from different seeds: the mean
pooled estimate and the mean CI width (two-sample z within Z_MAX), the coverage of the truth
(two-proportion z), and the distribution of the pooled estimates (two-sample KS p > P_MIN). A
power check shows the comparison catches a loop that spends twice the budget.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from experiments.bowen_liu.sim2.loop import release_and_pool
from harness import config
from harness.engine.study import load_study
from harness.inference import combine

# Unequal sample sizes, chosen for the cost of each path: a loop replicate costs ~1-1.6 ms CPU,
# a vectorised one ~0.02-0.03 ms. Every statistic's standard error scales with
# √(1/R_VEC + 1/R_LOOP): 1000/1000 gave 2.0e-3 under the root, 8000/560 gives 1.91e-3, so the
# power is kept (the control below, a loop at twice the budget, gave width z = 6.6 (MODIPS)
# and 10.6 (PERT) at 1000/1000, against Z_MAX = 4.5) with a loop 0.56 times as long. Under
# correct code each |z| > 4.5 has probability 7e-6 (three z and one KS p per estimand).
R_VEC = 8000
R_LOOP = 560
Z_MAX = 4.5
P_MIN = 1e-4
SCENARIOS = [{"bounds": "asym", "n": 40, "sigma2": 4.0}, {"bounds": "sym", "n": 100, "sigma2": 1.0}]
LOG_EPS = [-2.0, 1.0]
CELLS = [
    pytest.param(sc, label, x, id=f"{sc['bounds']},n={sc['n']}-{label}-lneps={x:g}")
    for sc in SCENARIOS for label in ("MODIPS", "PERT", "SMOOTH") for x in LOG_EPS
] + [
    pytest.param(sc, label, None, id=f"{sc['bounds']},n={sc['n']}-{label}")
    for sc in SCENARIOS for label in ("Ori", "MS")
]
ESTIMANDS = ("mu", "sigma2")


@pytest.fixture(scope="module")
def study():
    return load_study(config.load(["study=bowen_liu_sim2", "profile=ci"])["study"])


def _seed(*parts) -> np.random.SeedSequence:
    return np.random.SeedSequence([20240502, *"|".join(map(str, parts)).encode()])


def vectorised(study, scenario, label, log_eps) -> dict:
    eps = None if log_eps is None else float(np.exp(log_eps))
    data_ss, method_ss = _seed("vec", scenario, label, log_eps).spawn(2)
    data = study.generate(scenario, np.random.default_rng(data_ss), R_VEC)
    rel = study.method(label, scenario).release(data, eps, np.random.default_rng(method_ss))
    pooled = combine(*study.analyse(rel.sets, scenario))
    return {e: {"estimate": pooled.estimate[:, j], "ci_low": pooled.ci_low[:, j],
                "ci_high": pooled.ci_high[:, j]} for j, e in enumerate(ESTIMANDS)}


def loop(study, scenario, label, log_eps, eps_factor=1.0) -> dict:
    eps = None if log_eps is None else float(np.exp(log_eps)) * eps_factor
    rng = np.random.default_rng(_seed("loop", scenario, label, log_eps, eps_factor))
    out = [release_and_pool(scenario, label, eps, rng, study.config) for _ in range(R_LOOP)]
    return {e: {k: np.array([o[e][k] for o in out]) for k in ("estimate", "ci_low", "ci_high")}
            for e in ESTIMANDS}


def _z_means(x, y) -> float:
    se = math.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
    return 0.0 if se == 0 else float(x.mean() - y.mean()) / se


def _z_props(a, b) -> float:
    p = (a.sum() + b.sum()) / (a.size + b.size)
    se = math.sqrt(p * (1 - p) * (1 / a.size + 1 / b.size))
    return 0.0 if se == 0 else float(a.mean() - b.mean()) / se


def compare(a, b, truth) -> dict:
    cover = [(p["ci_low"] <= truth) & (truth <= p["ci_high"]) for p in (a, b)]
    return {
        "estimate": _z_means(a["estimate"], b["estimate"]),
        "width": _z_means(a["ci_high"] - a["ci_low"], b["ci_high"] - b["ci_low"]),
        "coverage": _z_props(*cover),
        "ks_p": float(stats.ks_2samp(a["estimate"], b["estimate"]).pvalue),
    }


def failures(result) -> list[str]:
    bad = [f"{k}: z = {v:.2f}" for k, v in result.items() if k != "ks_p" and not abs(v) < Z_MAX]
    return bad + ([f"KS p = {result['ks_p']:.2g}"] if not result["ks_p"] > P_MIN else [])


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "label", "log_eps"), CELLS)
def test_loop_and_vectorised_agree_in_distribution(study, scenario, label, log_eps):
    vec, ref = vectorised(study, scenario, label, log_eps), loop(study, scenario, label, log_eps)
    truths = study.estimands(scenario)
    for e in ESTIMANDS:
        assert np.all(np.isfinite(vec[e]["ci_low"])) and np.all(np.isfinite(ref[e]["ci_low"]))
        result = compare(vec[e], ref[e], truths[e])
        assert not failures(result), (e, result, failures(result))


@pytest.mark.slow
@pytest.mark.parametrize("label", ["MODIPS", "PERT"])
def test_comparison_detects_a_loop_with_the_wrong_budget(study, label):
    scenario = SCENARIOS[0]
    vec = vectorised(study, scenario, label, -2.0)
    wrong = loop(study, scenario, label, -2.0, eps_factor=2.0)
    result = compare(vec["mu"], wrong["mu"], 0.0)
    assert abs(result["width"]) > Z_MAX, result
