"""Bowen & Liu (2020) Simulation 3 as a plain per-replicate loop: the test oracle of the
vectorised path (``experiments.bowen_liu.sim3.study`` + ``harness``), timed by ``harness bench``.

Written straight from the paper (§4.3.1; spec 000 §4.3, §6 items 10–17), the way one would
write the simulation without the harness: ONE replicate at a time, a Python loop over the cells,
records drawn per cell. It shares no code with ``harness.synthesizers``, ``harness.models``,
``harness.privacy``, ``harness.histograms`` or ``harness.inference``. The two paths must agree in
distribution (``tests/bowen_liu/test_sim3_loop_vs_vectorised.py``).

Per replicate: n_k ~ Multinomial(n, π); z ~ N_2(μ_k, Σ) per record of cell k, clamped to
μ_k ± 4σ. Methods (m sets, ε/m each):

* MS: π ~ D(α + n), Σ ~ IW(n − K, SSP), μ_k ~ N(z̄_k, Σ/n_k); w̃ ~ Multinom(n, π);
  z̃ ~ N(μ_k, Σ) clamped to the cell box.
* MODIPS: the same from sanitized statistics: counts + Lap(Δ_c·6m/ε) clamped to [0, n];
  z̄_kj + Lap(8/n_k·6m/ε) clamped to the box; S_jl = SSP_jl/(n − K) + Lap(64(n−1)/(n(n−K))·6m/ε),
  variances clamped to [1e-6, 16n/(n − K)], the covariance to ±16n/(n−K) and then to
  ±0.99√(S11 S22); Σ ~ IW(n − K, (n − K)S*).
* NP-DIPS: counts + Lap(Δ_c·2m/ε) clamped to [0, n], largest remainder to n; per cell a
  K_1 × K_2 histogram (K_j = ceil(8σ_j/(3.5 S_j n_k^(−1/4))), S_j the pooled within-cell SD),
  bins + Lap(Δ_b·2m/ε), negative → 0, all-zero → uniform; bin then uniform within it.
* Ori: the data.

Per set: cell means (dropped when ñ_k < 2) with S²_j/ñ_k, pooled within-cell S²_j (divisor n − K
occupied cells) with (S²_j)²(2/(n−1) + κ_j/n), r with (1 − r²)/(n − 2), marginal P̂ with
P̂(1 − P̂)/n; pooled with Eqs. 9–11 over the sets not dropped.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special, stats

LEVEL = 0.95


def _number(v) -> float:
    return float(Fraction(v.replace(" ", ""))) if isinstance(v, str) else float(v)


def _setup(cfg: dict):
    cells = cfg["cells"]
    mu = np.column_stack([np.asarray(cells["mu1"], float), np.asarray(cells["mu2"], float)])
    pi = np.asarray(cells["pi"], float)
    pi = pi / pi.sum()
    s = np.asarray(cfg["sigma"], float)
    rho = float(cfg["rho"])
    sigma = np.array([[s[0] ** 2, rho * s[0] * s[1]], [rho * s[0] * s[1], s[1] ** 2]])
    half = float(cfg["bound_sd"]) * s
    levels = list(cfg["levels"])
    k = int(np.prod(levels))
    # cell k ↔ (w1, w2, w3): convention B (w1 fastest) or A (w3 fastest)
    lv = []
    for c in range(k):
        if cfg.get("cell_order", "B") == "B":
            w1, rest = c % levels[0], c // levels[0]
            lv.append((w1, rest % levels[1], rest // levels[1]))
        else:
            w3, rest = c % levels[2], c // levels[2]
            lv.append((rest // levels[1], rest % levels[1], w3))
    ind = np.array([[lv[c][v] == a for v, size in enumerate(levels) for a in range(size - 1)]
                    for c in range(k)], dtype=float)
    return mu, pi, sigma, mu - half, mu + half, ind


def _generate(n, mu, pi, sigma, lower, upper, rng):
    counts = rng.multinomial(n, pi)
    chol = np.linalg.cholesky(sigma)
    z, cell = [], []
    for k, nk in enumerate(counts):
        for _ in range(nk):
            x = mu[k] + chol @ rng.standard_normal(2)
            z.append(np.minimum(np.maximum(x, lower[k]), upper[k]))
            cell.append(k)
    return np.array(z), np.array(cell, dtype=int)


def _cell_stats(z, cell, k):
    counts = np.zeros(k)
    means = np.full((k, 2), np.nan)
    ssp = np.zeros((2, 2))
    resid = np.zeros_like(z)
    for c in range(k):
        idx = cell == c
        counts[c] = idx.sum()
        if counts[c] > 0:
            means[c] = z[idx].mean(axis=0)
            d = z[idx] - means[c]
            resid[idx] = d
            ssp += d.T @ d
    return counts, means, ssp, resid


def _analyse(z, cell, k, ind):
    n = len(z)
    counts, means, ssp, resid = _cell_stats(z, cell, k)
    cov = ssp / (n - (counts > 0).sum())
    s2 = np.diag(cov)
    m2 = (resid**2).mean(axis=0)
    m4 = (resid**4).mean(axis=0)
    kappa = np.where(m2 > 0, m4 / np.where(m2 > 0, m2**2, 1) - 3, 0.0)
    est, var = [], []
    for j in range(2):
        for c in range(k):
            if counts[c] >= 2:
                est.append(means[c, j])
                var.append(s2[j] / counts[c])
            else:
                est.append(math.nan)
                var.append(math.nan)
    for j in range(2):
        est.append(s2[j])
        var.append(s2[j] ** 2 * (2 / (n - 1) + kappa[j] / n))
    r = cov[0, 1] / math.sqrt(cov[0, 0] * cov[1, 1])
    est.append(r)
    var.append((1 - r * r) / (n - 2))
    p = counts @ ind / n
    est.extend(p)
    var.extend(p * (1 - p) / n)
    return np.array(est), np.array(var)


def _pool(q, u):
    """Eqs. 9–11 over the sets whose estimate is not NaN (scalar form)."""
    keep = [i for i in range(len(q)) if not math.isnan(q[i])]
    m = len(keep)
    if m == 0:
        return (math.nan, math.nan, math.inf, math.nan, math.nan, False)
    qs = [q[i] for i in keep]
    us = [u[i] for i in keep]
    qbar = sum(qs) / m
    w = sum(us) / m
    if m == 1:
        t, df = w, math.inf
    else:
        b = sum((x - qbar) ** 2 for x in qs) / (m - 1)
        t = b / m + w
        df = (m - 1) * (1 + m * w / b) ** 2 if b > 0 else math.inf
    if not (math.isfinite(t) and t > 0):
        return (qbar, t, df, math.nan, math.nan, False)
    # the t quantile as stats.t.ppf computes it (its _ppf is special.stdtrit), without the
    # argument checks of the distribution object, which cost more than the quantile
    qt = stats.norm.ppf(0.5 + LEVEL / 2) if math.isinf(df) else special.stdtrit(df, 0.5 + LEVEL / 2)
    half = float(qt) * math.sqrt(t)
    return (qbar, t, df, qbar - half, qbar + half, True)


def _iw(df, scale, rng):
    return np.atleast_2d(stats.invwishart.rvs(df=df, scale=scale, random_state=rng))


def _glom_set(n, counts, means, cov, n_for_mu, lower, upper, alpha, rng):
    k = len(counts)
    pi = rng.dirichlet(alpha + np.maximum(counts, 0.0))
    sig = _iw(n - k, (n - k) * cov, rng)
    w = rng.multinomial(n, pi)
    z, cell = [], []
    # check_valid="ignore": Σ is an inverse-Wishart draw, PSD by construction; numpy's check
    # (a reconstruction and allclose per call, no randomness) was ~40 % of the loop's time
    for c in range(k):
        mu_c = rng.multivariate_normal(means[c], sig / max(n_for_mu[c], 1.0),
                                       check_valid="ignore")
        if w[c]:
            x = rng.multivariate_normal(mu_c, sig, size=w[c], check_valid="ignore")
            z.append(np.minimum(np.maximum(x, lower[c]), upper[c]))
            cell.extend([c] * w[c])
    return np.vstack(z), np.array(cell, dtype=int)


def _largest_remainder(weights, total):
    s = weights.sum()
    share = weights / s if s > 0 else np.full(len(weights), 1 / len(weights))
    exact = share * total
    base = np.floor(exact).astype(int)
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - base[i]), i))
    for i in order[: total - base.sum()]:
        base[i] += 1
    return base


def release_and_pool(scenario, label, epsilon, rng, study_config) -> dict:
    """One replicate of Simulation 3 for roster entry ``label``; returns arrays (57,) of the
    pooled estimate, variance, df, ci_low, ci_high and usable."""
    cfg = study_config
    n = int(scenario["n"])
    mu, pi, sigma, lower, upper, ind = _setup(cfg)
    k = len(pi)
    z, cell = _generate(n, mu, pi, sigma, lower, upper, rng)
    spec = dict(cfg["roster"][label])
    name = spec.pop("synthesizer")
    m = int(spec.get("m", 1))
    glom = cfg.get("glom", {})
    alpha = _number(glom.get("alpha", 0.5))
    sets = []
    if name == "ori":
        sets = [(z, cell)]
    elif name in ("ms", "modips"):
        counts, means, ssp, _ = _cell_stats(z, cell, k)
        centre = (lower + upper) / 2
        means = np.where(counts[:, None] > 0, np.nan_to_num(means), centre)
        cov = ssp / (n - k)
        for _ in range(m):
            if name == "ms":
                sets.append(_glom_set(n, counts, means, cov, counts, lower, upper, alpha, rng))
                continue
            e6 = epsilon / m / 6
            dc = float(glom.get("count_sensitivity", 1.0))
            c_star = np.clip(counts + rng.laplace(0, dc / e6, size=k), 0, n)
            nk = np.maximum(counts, 1.0) if glom.get("cell_counts", "true") in (True, "true") \
                else np.maximum(c_star, 1.0)
            m_star = np.empty((k, 2))
            for c in range(k):
                for j in range(2):
                    sens = (upper[c, j] - lower[c, j]) / nk[c]
                    m_star[c, j] = min(max(means[c, j] + rng.laplace(0, sens / e6), lower[c, j]),
                                       upper[c, j])
            w = (upper - lower).max(axis=0)
            top = n / (4.0 * (n - k))
            s_star = np.zeros((2, 2))
            for j, l in ((0, 0), (1, 1), (0, 1)):
                sens = w[j] * w[l] * (n - 1) / (n * (n - k))
                val = cov[j, l] + rng.laplace(0, sens / e6)
                lo = 1e-6 if j == l else -w[j] * w[l] * top
                s_star[j, l] = s_star[l, j] = min(max(val, lo), w[j] * w[l] * top)
            lim = 0.99 * math.sqrt(s_star[0, 0] * s_star[1, 1])
            s_star[0, 1] = s_star[1, 0] = min(max(s_star[0, 1], -lim), lim)
            sets.append(_glom_set(n, c_star, m_star, s_star, nk, lower, upper, alpha, rng))
    elif name == "cell_histogram":
        weights = spec.get("budget_weights") or {"counts": 0.5, "bins": 0.5}
        counts, _, ssp, _ = _cell_stats(z, cell, k)
        sd = np.sqrt(np.diag(ssp) / (n - k))  # pooled within-cell SD (the default)
        for _ in range(m):
            e = epsilon / m
            noisy = np.clip(counts + rng.laplace(0, float(spec.get("count_sensitivity", 1))
                                                 / (e * weights["counts"]), size=k), 0, n)
            n_tilde = _largest_remainder(noisy, n)
            zs, cs = [], []
            for c in range(k):
                nb = []
                for j in range(2):
                    h = 3.5 * sd[j] * max(counts[c], 1) ** (-0.25)
                    kb = math.ceil((upper[c, j] - lower[c, j]) / h)
                    nb.append(kb if (counts[c] >= 2 and kb >= 1) else 1)
                edges = [np.linspace(lower[c, j], upper[c, j], nb[j] + 1) for j in range(2)]
                hist = np.zeros(nb)
                if counts[c] > 0:
                    hist = np.histogram2d(z[cell == c, 0], z[cell == c, 1], bins=edges)[0]
                hist = hist + rng.laplace(0, float(spec.get("bin_sensitivity", 1))
                                          / (e * weights["bins"]), size=hist.shape)
                p = np.maximum(hist, 0).ravel()
                p = p / p.sum() if p.sum() > 0 else np.full(p.size, 1 / p.size)
                if n_tilde[c] == 0:
                    continue
                b = rng.choice(p.size, size=n_tilde[c], p=p)
                i1, i2 = b // nb[1], b % nb[1]
                x1 = edges[0][i1] + rng.random(n_tilde[c]) * (edges[0][1] - edges[0][0])
                x2 = edges[1][i2] + rng.random(n_tilde[c]) * (edges[1][1] - edges[1][0])
                zs.append(np.column_stack([x1, x2]))
                cs.extend([c] * n_tilde[c])
            sets.append((np.vstack(zs), np.array(cs, dtype=int)))
    else:
        raise ValueError(f"no loop implementation of {name!r}")
    est, var = zip(*(_analyse(zz, cc, k, ind) for zz, cc in sets), strict=True)
    est, var = np.array(est), np.array(var)
    pooled = [_pool(est[:, e], var[:, e]) for e in range(est.shape[1])]
    keys = ("estimate", "variance", "df", "ci_low", "ci_high", "usable")
    return {key: np.array([p[i] for p in pooled]) for i, key in enumerate(keys)}
