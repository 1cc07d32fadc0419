"""The vectorised Simulation 1 (count tables, ``harness.synthesizers``, ``harness.inference``)
agrees in distribution with the record-level per-replicate loop written from the paper's text
(``experiments.bowen_liu.sim1.loop``), for every method of the roster, at (n = 40, π = 0.15) and
(n = 100, π = 0.5) and ln ε ∈ {−2, 1}.

Per cell, with R_VEC vectorised and R_LOOP loop replicates drawn from different seeds:
* mean pooled estimate: two-sample z (difference / combined standard error) within Z_MAX;
* mean CI width (usable replicates): two-sample z within Z_MAX;
* coverage of the true π (usable replicates) and proportion of usable replicates: two-proportion
  z-tests within Z_MAX;
* the distribution of the usable pooled estimates: two-sample Kolmogorov-Smirnov p > P_MIN (the
  estimates are discrete, so the KS p-value is conservative).
A power check shows the machinery detects a loop that spends the wrong budget (ε doubled).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from experiments.bowen_liu.sim1.loop import pool_sets, release_and_pool
from harness import config
from harness.engine.study import load_study
from harness.inference import combine

# Unequal sample sizes, chosen for the cost of each path: a loop replicate costs ~0.35 ms CPU,
# a vectorised one ~0.005 ms. Every statistic's standard error scales with
# √(1/R_VEC + 1/R_LOOP): 2000/2000 gave 1.0e-3 under the root, 16000/1100 gives 0.97e-3 (a
# loop half as long, the same power: a standardised difference of 4.5·√0.97e-3 ≈ 0.14 SD is
# still the detection limit; the KS test's effective size R_VEC·R_LOOP/(R_VEC + R_LOOP) is
# 1029 vs 1000). Under correct code each |z| > 4.5 has probability 7e-6 (four z per cell).
R_VEC = 16000
R_LOOP = 1100
Z_MAX = 4.5
P_MIN = 1e-4
SCENARIOS = [{"n": 40, "pi": 0.15}, {"n": 100, "pi": 0.5}]
LOG_EPS = [-2.0, 1.0]
PRIVATE = ["MODIPS", "LAP", "MD", "BB-MR"]
NON_PRIVATE = ["Ori", "MS"]

CELLS = [
    pytest.param(sc, label, x, id=f"n={sc['n']},pi={sc['pi']}-{label}-lneps={x:g}")
    for sc in SCENARIOS for label in PRIVATE for x in LOG_EPS
] + [
    pytest.param(sc, label, None, id=f"n={sc['n']},pi={sc['pi']}-{label}")
    for sc in SCENARIOS for label in NON_PRIVATE
]


@pytest.fixture(scope="module")
def study():
    cfg = config.load(["profile=ci"])
    return load_study(cfg["study"])


def _seed(*parts) -> np.random.SeedSequence:
    text = "|".join(str(p) for p in parts)
    return np.random.SeedSequence([20240501, *text.encode()])


def vectorised(study, scenario, label, log_eps, r=R_VEC) -> dict:
    eps = None if log_eps is None else float(np.exp(log_eps))
    data_ss, method_ss = _seed("vec", scenario, label, log_eps).spawn(2)
    synth = study.method(label, scenario)
    data = study.generate(scenario, np.random.default_rng(data_ss), r)
    rel = synth.release(data, eps, np.random.default_rng(method_ss))
    est, var = study.analyse(rel.sets, scenario)
    pooled = combine(est, var, rule=study.config.get("combining_rule", "partial"))
    usable = np.asarray(study.usable(rel, pooled), dtype=bool)[:, 0]
    return {
        "estimate": pooled.estimate[:, 0],
        "ci_low": pooled.ci_low[:, 0],
        "ci_high": pooled.ci_high[:, 0],
        "usable": usable,
    }


def loop(study, scenario, label, log_eps, r=R_LOOP, eps_factor=1.0) -> dict:
    eps = None if log_eps is None else float(np.exp(log_eps)) * eps_factor
    rng = np.random.default_rng(_seed("loop", scenario, label, log_eps, eps_factor))
    out = [release_and_pool(scenario, label, eps, rng, study.config) for _ in range(r)]
    return {
        k: np.array([o[k] for o in out], dtype=bool if k == "usable" else float)
        for k in ("estimate", "ci_low", "ci_high", "usable")
    }


def _z_means(x: np.ndarray, y: np.ndarray) -> float:
    se = math.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
    diff = float(x.mean() - y.mean())
    if se == 0:
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return diff / se


def _z_props(k1: int, n1: int, k2: int, n2: int) -> float:
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    diff = k1 / n1 - k2 / n2
    if se == 0:
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return diff / se


def compare(a: dict, b: dict, truth: float) -> dict:
    """z statistics and the KS p-value of path a against path b."""
    ua, ub = a["usable"], b["usable"]
    width_a = (a["ci_high"] - a["ci_low"])[ua]
    width_b = (b["ci_high"] - b["ci_low"])[ub]
    cover_a = (a["ci_low"][ua] <= truth) & (truth <= a["ci_high"][ua])
    cover_b = (b["ci_low"][ub] <= truth) & (truth <= b["ci_high"][ub])
    return {
        "estimate": _z_means(a["estimate"], b["estimate"]),
        "width": _z_means(width_a, width_b),
        "coverage": _z_props(int(cover_a.sum()), cover_a.size, int(cover_b.sum()), cover_b.size),
        "usable": _z_props(int(ua.sum()), ua.size, int(ub.sum()), ub.size),
        "ks_p": float(stats.ks_2samp(a["estimate"][ua], b["estimate"][ub]).pvalue),
    }


def _failures(result: dict) -> list[str]:
    bad = [f"{k}: z = {v:.2f}" for k, v in result.items() if k != "ks_p" and not abs(v) < Z_MAX]
    if not result["ks_p"] > P_MIN:
        bad.append(f"KS p = {result['ks_p']:.2g}")
    return bad


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "label", "log_eps"), CELLS)
def test_loop_and_vectorised_agree_in_distribution(study, scenario, label, log_eps):
    vec = vectorised(study, scenario, label, log_eps)
    ref = loop(study, scenario, label, log_eps)
    assert np.all(np.isfinite(vec["estimate"])) and np.all(np.isfinite(ref["estimate"]))
    # unusable replicates have an undefined CI in both paths, usable ones a finite CI
    for path in (vec, ref):
        assert np.all(np.isnan(path["ci_low"][~path["usable"]]))
        assert np.all(np.isfinite(path["ci_low"][path["usable"]]))
    result = compare(vec, ref, float(scenario["pi"]))
    assert not _failures(result), (result, _failures(result))


@pytest.mark.slow
@pytest.mark.parametrize("label", ["MODIPS", "LAP"])
def test_comparison_detects_a_loop_with_the_wrong_budget(study, label):
    scenario, log_eps = SCENARIOS[0], -2.0
    vec = vectorised(study, scenario, label, log_eps)
    wrong = loop(study, scenario, label, log_eps, eps_factor=2.0)
    result = compare(vec, wrong, float(scenario["pi"]))
    # ε doubled halves the Laplace scale: the CIs are far narrower, not a borderline call
    # (width z ≈ 21 (MODIPS) and 24 (LAP) at 2000/2000; the same standard error here)
    assert result["width"] > 3 * Z_MAX, result
    assert "width" in " ".join(_failures(result))


def test_loop_pooling_matches_the_combining_rule():
    # the oracle's scalar pooling and harness.inference.combine agree on arbitrary inputs,
    # including B = 0 (ν = ∞), T = 0 (unusable) and m = 1
    rng = np.random.default_rng(7)
    cases = [rng.random((5, 1)) for _ in range(20)] + [np.full((5, 1), 0.3), np.zeros((5, 1))]
    cases += [rng.random((1, 1)), np.ones((1, 1))]
    for rule in ("partial", "full"):
        for q in cases:
            u = q * (1 - q) / 40
            ref = combine(q[None], u[None], rule=rule)
            got = pool_sets(q[:, 0], u[:, 0], rule=rule)
            assert got["usable"] == bool(ref.usable[0, 0])
            for key, arr in (("estimate", ref.estimate), ("variance", ref.variance),
                             ("df", ref.df), ("ci_low", ref.ci_low), ("ci_high", ref.ci_high)):
                np.testing.assert_allclose(got[key], arr[0, 0], rtol=1e-9, equal_nan=True)


def test_loop_lap_at_tiny_noise_releases_the_original_count(study):
    # At ε = e^8 the Laplace scale is 5/e^8 ≈ 0.002: every LAP set holds exactly n1 ones, so
    # B = 0, ν = ∞ and the pooled inference is Ori's on the same records (same seed, same x).
    for seed in range(10):
        sc = {"n": 100, "pi": 0.3}
        lap = release_and_pool(sc, "LAP", float(np.exp(8)), np.random.default_rng(seed),
                               study.config)
        ori = release_and_pool(sc, "Ori", None, np.random.default_rng(seed), study.config)
        assert lap["df"] > 1e12  # B = 0 up to rounding of the mean
        for key in ("estimate", "variance", "ci_low", "ci_high"):
            assert lap[key] == pytest.approx(ori[key], rel=1e-12)
    with pytest.raises(ValueError, match="ε"):
        release_and_pool({"n": 40, "pi": 0.5}, "MODIPS", None, np.random.default_rng(0),
                         study.config)


@pytest.mark.slow
@pytest.mark.parametrize("postprocess", ["redraw", "reviewer"])
@pytest.mark.parametrize("label", ["MODIPS", "LAP"])
def test_postprocessing_variants_agree(postprocess, label):
    # the bounds matter most where the noise is large relative to n: n = 40, ln ε = −2
    cfg = config.load(["profile=ci", f"study.postprocess={postprocess}"])
    variant = load_study(cfg["study"])
    scenario = SCENARIOS[0]
    vec = vectorised(variant, scenario, label, -2.0)
    ref = loop(variant, scenario, label, -2.0)
    result = compare(vec, ref, float(scenario["pi"]))
    assert not _failures(result), (result, _failures(result))
