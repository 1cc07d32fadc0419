"""Bowen & Liu (2020) Simulation 2 as a plain per-replicate, record-level loop: the test oracle
of the vectorised path (``experiments.bowen_liu.sim2.study`` + ``harness.synthesizers``), timed by
``harness bench``.

Written straight from the paper's text (Bowen & Liu 2020, §3.1.2 Eqs. 5–7 and §4.2; spec 000
§2.2, §2.3, §4.2), one replicate at a time, with every record drawn explicitly. It shares no code
with ``harness`` (models, synthesizers, histograms, privacy, inference); the combining rule is
the scalar one of ``sim1.loop.pool_sets`` (Eqs. 9–11).

Per replicate: x_i ~ N(μ, σ²) clamped to [c₀, c₁] (or truncated), i = 1..n. Per method, with
total budget ε and m sets:

* Ori: the data. MS: σ²_j ~ Inv-Gamma((n−1)/2, (n−1)S²/2), μ_j ~ N(x̄, σ²_j/n),
  x̃ ~ N(μ_j, σ²_j) clamped to [c₀, c₁].
* MODIPS: x̄* = x̄ + Lap((c₁−c₀)/n / (ε/2m)) and S²* = S² + Lap((c₁−c₀)²/n / (ε/2m)), clamped
  to [c₀, c₁] and [0, (c₁−c₀)²/4 · n/(n−1)], S²* floored at 1e-12 (c₁−c₀)², then as MS.
* PERT: K = ceil((c₁−c₀)/(3.5 S n^(−1/3))) equal bins on [c₀, c₁] (S the data's SD, or the
  public σ), counts + Lap(Δ m/ε) per bin, negatives to 0 (all zero: uniform), then n records:
  a bin with probability ∝ the noisy count, uniform within it.
* SMOOTH: same K, λ = K/(K + n(e^{ε/(m n)} − 1)); each record's bin has probability
  (1 − λ) n_k/n + λ/K, uniform within it (m = 1 in the paper).

Each set: x̄ with s²/n; s² with (s²)²(2/(n − 1) + κ/n), κ = m₄/m₂² − 3. Returns, per estimand
("mu", "sigma2"), the pooled estimate, variance, df, ci_low, ci_high and usable flag.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..sim1.loop import pool_sets

FLOOR = 1e-12


def _number(value) -> float:
    if isinstance(value, str):
        return float(Fraction(value.replace(" ", "")))
    return float(value)


def _bounds(scenario: dict, config: dict) -> tuple[float, float, float, float]:
    mu = _number(config.get("mu", 0))
    sigma = math.sqrt(float(scenario["sigma2"]))
    a, b = (_number(v) for v in config["bound_settings"][scenario["bounds"]])
    return mu, sigma, mu + a * sigma, mu + b * sigma


def _data(n, mu, sigma, lo, hi, how, rng) -> np.ndarray:
    if how == "clamp":
        return np.clip(rng.normal(mu, sigma, n), lo, hi)
    out = np.empty(n)
    for i in range(n):  # rejection sampling, record by record
        while True:
            v = rng.normal(mu, sigma)
            if lo <= v <= hi:
                out[i] = v
                break
    return out


def _normal_set(xbar, s2, n, lo, hi, rng) -> np.ndarray:
    sigma2 = (n - 1) * s2 / 2.0 / rng.gamma((n - 1) / 2.0)
    mu = rng.normal(xbar, math.sqrt(sigma2 / n))
    return np.clip(rng.normal(mu, math.sqrt(sigma2), n), lo, hi)


def _histogram_set(weights, n, lo, hi, rng) -> np.ndarray:
    k = len(weights)
    w = np.maximum(np.asarray(weights, dtype=float), 0.0)
    p = w / w.sum() if w.sum() > 0 else np.full(k, 1.0 / k)
    width = (hi - lo) / k
    bins = rng.choice(k, size=n, p=p)  # each record's bin, then a point uniform within it
    return lo + (bins + rng.random(n)) * width


def _analyse(x: np.ndarray) -> tuple[tuple[float, float], tuple[float, float]]:
    n = len(x)
    xbar = float(np.mean(x))
    s2 = float(np.var(x, ddof=1))
    m2 = float(np.mean((x - xbar) ** 2))
    m4 = float(np.mean((x - xbar) ** 4))
    kappa = m4 / m2**2 - 3.0 if m2 > 0 else 0.0
    return (xbar, s2 / n), (s2, s2 * s2 * (2.0 / (n - 1) + kappa / n))


def release_and_pool(scenario: dict, label: str, epsilon: float | None,
                     rng: np.random.Generator, study_config: dict) -> dict:
    """One replicate of Simulation 2 for roster entry ``label`` (see the module docstring)."""
    n = int(scenario["n"])
    mu, sigma, lo, hi = _bounds(scenario, study_config)
    spec = dict(study_config["roster"][label])
    name = spec.pop("synthesizer")
    m = int(spec.get("m", 1))
    x = _data(n, mu, sigma, lo, hi, study_config.get("data_bounding", "clamp"), rng)
    xbar, s2 = float(np.mean(x)), float(np.var(x, ddof=1))

    sets = []
    if name == "ori":
        sets.append(x)
    elif name == "ms":
        sets = [_normal_set(xbar, s2, n, lo, hi, rng) for _ in range(m)]
    elif name == "modips":
        eps_stat = epsilon / m / 2.0
        upper_s2 = (hi - lo) ** 2 / 4.0 * n / (n - 1)
        for _ in range(m):
            xbar_star = min(max(xbar + rng.laplace(0.0, (hi - lo) / n / eps_stat), lo), hi)
            s2_star = min(max(s2 + rng.laplace(0.0, (hi - lo) ** 2 / n / eps_stat), 0.0), upper_s2)
            s2_star = max(s2_star, FLOOR * (hi - lo) ** 2)
            sets.append(_normal_set(xbar_star, s2_star, n, lo, hi, rng))
    elif name in ("perturbed_histogram", "smoothed_histogram"):
        sd = sigma if study_config.get("bin_sd", "sample") == "public" else math.sqrt(s2)
        k = max(1, math.ceil((hi - lo) / (3.5 * sd * n ** (-1.0 / 3.0)))) if sd > 0 else 1
        counts, _ = np.histogram(x, bins=k, range=(lo, hi))
        if name == "perturbed_histogram":
            scale = float(spec.get("sensitivity", 1.0)) * m / epsilon
            for _ in range(m):
                sets.append(_histogram_set(counts + rng.laplace(0.0, scale, k), n, lo, hi, rng))
        else:
            eps_set = epsilon / m
            lam = k / (k + n * math.expm1(eps_set / n))
            for _ in range(m):
                sets.append(_histogram_set((1 - lam) * counts / n + lam / k, n, lo, hi, rng))
    else:
        raise ValueError(f"{label}: synthesizer {name!r} is not part of Simulation 2")

    per_set = [_analyse(s) for s in sets]
    rule = study_config.get("combining_rule", "partial")
    out = {}
    for j, estimand in enumerate(("mu", "sigma2")):
        est = [p[j][0] for p in per_set]
        var = [p[j][1] for p in per_set]
        pooled = pool_sets(est, var, rule=rule)
        out[estimand] = {k: pooled[k] for k in
                         ("estimate", "variance", "df", "ci_low", "ci_high", "usable")}
    return out
