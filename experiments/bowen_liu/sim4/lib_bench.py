"""Throughput of the Simulation 4 library pieces (Bowen & Liu 2020 §4.3.2): Firth analyses
(harness/inference/firth.py), posterior draws (harness/models/logistic.py) and the
Chaudhuri–Monteleoni noise, with an estimate of the profile=paper cost of the β-parts of
Simulation 4 (1000 replicates × 5 sets × 9 ε).

    python -m experiments.bowen_liu.sim4.lib_bench [--replicates 500] [--sets 5]

Runs in one process with one BLAS thread (as a harness worker does) and reports CPU seconds
(``time.process_time``), which other processes on the machine disturb less than wall time.
The data are SLOMAG data sets of n = 1000 records from the paper's generating model; the
"separated" case regenerates the responses from 10·β, which is what synthetic data look like
after a very noisy β* (MODIPS-Correct at ε ≤ e⁻², where the paper's logistic fits "fail to
converge"): near-complete separation, where Firth's Newton–Raphson runs to its 25 iterations.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from harness.inference.firth import firth_baseline_category, firth_logistic
from harness.models.logistic import posterior_draws, predictive_draw
from harness.privacy import PrivacyLedger, chaudhuri_monteleoni_noise

# Bowen & Liu §4.3.2 generating model
BETA1 = np.array([-1.0, 0.5, -1.0])
BETA2 = np.array([-2.0, -1.0, 1.5, 0.5])
BETA34 = np.array([[0.0, -2.5, 1.0, 0.5, 0.4], [0.1, -1.0, -0.5, 0.0, 1.5]])
RHO = 0.5
N = 1000
#: methods × ε × sets analysed per replicate: Ori (1 set), MS (5 sets, no ε), and three private
#: methods (MODIPS-Correct, MODIPS-Wrong, NP-DIPS) × 9 ε × 5 sets
N_EPS = 9
N_PRIVATE = 3


def slomag(rng, shape, n=N, scale=1.0):
    """Designs x1, x2, x3 and responses w1, w2, w3 (w3 coded 0, 1, 2) of SLOMAG data sets;
    ``scale`` multiplies every β (scale = 10: near-separated responses)."""
    z = rng.multivariate_normal([0, 0], [[1, RHO], [RHO, 1]], size=(*shape, n)).clip(-4, 4)
    x1 = np.concatenate([np.ones((*shape, n, 1)), z], axis=-1)
    w1 = predictive_draw(x1, scale * BETA1, rng)
    x2 = np.concatenate([x1, w1[..., None]], axis=-1)
    w2 = predictive_draw(x2, scale * BETA2, rng)
    x3 = np.concatenate([x2, w2[..., None]], axis=-1)
    w3 = predictive_draw(x3, scale * BETA34, rng, n_categories=3)
    return (x1, w1), (x2, w2), (x3, w3)


def analyse(models):
    """The Firth analysis of one batch of synthetic sets: β1, β2 and the two W3 contrasts."""
    (x1, w1), (x2, w2), (x3, w3) = models
    f1 = firth_logistic(x1, w1)
    f2 = firth_logistic(x2, w2)
    f3 = firth_baseline_category(x3, w3, 3)
    return f1, f2, f3


def _cpu(fn):
    t0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - t0, time.perf_counter() - w0


def run(replicates: int = 500, sets: int = 5, posterior_replicates: int = 200, seed: int = 1):
    rng = np.random.default_rng(seed)
    lines = []
    with threadpool_limits(1):
        # 1. Firth fits/s: the W2 model (p = 4) on (R, m) data sets of n = 1000
        _, (x2, w2), _ = slomag(rng, (replicates, sets))
        fit, cpu, wall = _cpu(lambda: firth_logistic(x2, w2))
        k = replicates * sets
        lines.append(f"Firth p=4, n={N}: {k} fits in {cpu:.2f} s CPU ({wall:.2f} s wall): "
                     f"{k / cpu:,.0f} fits/s; iterations {np.bincount(fit.iterations.ravel())}; "
                     f"converged {fit.converged.mean():.3f}")
        # 2. whole analyses (β1, β2, β3/β4 contrasts), typical and near-separated data
        typical = slomag(rng, (replicates, sets))
        (f1, f2, f3), cpu_t, _ = _cpu(lambda: analyse(typical))
        per_typ = cpu_t / k
        lines.append(f"Full β analysis (4 Firth fits) of typical sets: {k / cpu_t:,.0f} sets/s; "
                     f"converged {f1.converged.mean():.3f}/{f2.converged.mean():.3f}/"
                     f"{f3.converged.mean():.3f}")
        k_sep = max(k // 5, 1)
        sep = slomag(rng, (k_sep,), scale=10.0)
        (g1, g2, g3), cpu_s, _ = _cpu(lambda: analyse(sep))
        per_sep = cpu_s / k_sep
        lines.append(f"Full β analysis of near-separated sets (10·β): {k_sep / cpu_s:,.0f} sets/s;"
                     f" converged {g1.converged.mean():.3f}/{g2.converged.mean():.3f}/"
                     f"{g3.converged.mean():.3f}, mean iterations "
                     f"{g1.iterations.mean():.1f}/{g2.iterations.mean():.1f}/"
                     f"{g3.iterations.mean():.1f}")
        # 3. posterior draws: MS (flat) and MODIPS-Correct (λ = 0.5, ‖x‖ ≤ 1), 5 draws each
        models = slomag(rng, (posterior_replicates,))
        norms = (np.sqrt(33.0), np.sqrt(34.0), np.sqrt(35.0))
        t_post = 0.0
        for (x, y), c, kcat in zip(models, norms, (2, 2, 3), strict=True):
            for lam, sc in ((0.0, 1.0), (0.5, c)):
                post, cpu_p, _ = _cpu(lambda x=x, y=y, sc=sc, lam=lam, kcat=kcat: posterior_draws(
                    x / sc, y, 5, rng, n_categories=kcat, prior_precision=lam))
                t_post += cpu_p
                lines.append(f"posterior draws p={x.shape[-1]} K={kcat} λ={lam}: "
                             f"{posterior_replicates / cpu_p:,.0f} replicates/s "
                             f"({5 * posterior_replicates / cpu_p:,.0f} draws/s), acceptance "
                             f"{post.acceptance.mean():.2f}")
        per_rep_post = t_post / posterior_replicates
        # 4. CM2009 noise for 5 sets × 9 ε × 3 vectors per replicate
        _, cpu_n, _ = _cpu(lambda: [chaudhuri_monteleoni_noise(
            np.zeros((1000, 5, 10)), n=N, regularization=0.5, epsilon=0.1, rng=rng,
            ledger=PrivacyLedger(), statistic="b") for _ in range(3 * N_EPS)])
    # 5. profile=paper estimate of the β parts of Sim 4
    sets_per_rep = 1 + 5 + N_PRIVATE * N_EPS * 5
    worst_sets = 3 * 5  # MODIPS-Correct at the three smallest ε: near-separated synthetic data
    firth_cpu = 1000 * ((sets_per_rep - worst_sets) * per_typ + worst_sets * per_sep)
    post_cpu = 1000 * per_rep_post
    noise_cpu = cpu_n
    total = firth_cpu + post_cpu + noise_cpu
    lines.append(
        f"profile=paper estimate (1000 replicates, {sets_per_rep} analysed sets per replicate, "
        f"{worst_sets} of them near-separated): Firth {firth_cpu:,.0f} s CPU, posterior draws "
        f"{post_cpu:,.0f} s CPU (MS + MODIPS once per replicate), CM noise {noise_cpu:.1f} s; "
        f"total {total:,.0f} s CPU = {total / 2 / 60:.1f} min on 2 cores (β parts only)")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=500)
    ap.add_argument("--sets", type=int, default=5)
    ap.add_argument("--posterior-replicates", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    for line in run(a.replicates, a.sets, a.posterior_replicates, a.seed):
        print(line)


if __name__ == "__main__":
    main()
