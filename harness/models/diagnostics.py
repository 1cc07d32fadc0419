"""MCMC convergence diagnostics, vectorised over leading axes: split R-hat and the
effective sample size of Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021, "Rank-
normalization, folding, and localization: an improved R-hat"), the definitions used by Stan,
ArviZ and posterior; Bowen & Liu (2020) §4.3.2 check their Metropolis chains with the psrf
(R ``coda``), the un-split ancestor of split R-hat (spec 000 §4.4, §6 item 20).

Draws are arrays (..., chains, iterations); results have shape (...). A constant series has
R-hat NaN and ESS NaN (nothing to estimate).
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["effective_sample_size", "rank_normalise", "split_chains", "split_rhat"]


def split_chains(x: np.ndarray) -> np.ndarray:
    """Halve every chain (dropping the middle iteration of an odd length): (..., M, N) →
    (..., 2M, ⌊N/2⌋)."""
    x = np.asarray(x, dtype=float)
    half = x.shape[-1] // 2
    return np.concatenate([x[..., :half], x[..., x.shape[-1] - half:]], axis=-2)


def rank_normalise(x: np.ndarray) -> np.ndarray:
    """Φ⁻¹((r − 3/8)/(S + 1/4)) of the ranks r over all S = M·N draws of each series
    (average ranks for ties), Vehtari et al. (2021) Eq. (14)."""
    from scipy import stats  # at call time: importing scipy.stats costs every process ~1 s

    x = np.asarray(x, dtype=float)
    flat = x.reshape(*x.shape[:-2], -1)
    r = stats.rankdata(flat, axis=-1)
    z = special.ndtri((r - 0.375) / (flat.shape[-1] + 0.25))
    return z.reshape(x.shape)


def _rhat(x: np.ndarray) -> np.ndarray:
    """Potential scale reduction √(V̂/W) of chains (..., M, N) (Gelman et al. BDA3 §11.4)."""
    n = x.shape[-1]
    means = x.mean(axis=-1)
    w = x.var(axis=-1, ddof=1).mean(axis=-1)
    b = n * means.var(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(((n - 1) / n * w + b / n) / w)


def split_rhat(x: np.ndarray, *, rank: bool = False) -> np.ndarray:
    """Split R-hat of draws (..., chains, iterations). With ``rank=True``: the rank-normalised
    version of Vehtari et al. (2021), max of bulk R-hat and folded (|x − median|) R-hat."""
    s = split_chains(x)
    if not rank:
        return _rhat(s)
    bulk = _rhat(rank_normalise(s))
    med = np.median(s.reshape(*s.shape[:-2], -1), axis=-1)[..., None, None]
    tail = _rhat(rank_normalise(np.abs(s - med)))
    return np.maximum(bulk, tail)


def _autocovariance(x: np.ndarray) -> np.ndarray:
    """Autocovariance (biased, divisor N) of every chain along the last axis, by FFT."""
    n = x.shape[-1]
    d = x - x.mean(axis=-1, keepdims=True)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfft(d, n=size, axis=-1)
    return np.fft.irfft(f * np.conj(f), n=size, axis=-1)[..., :n] / n


def effective_sample_size(x: np.ndarray, *, split: bool = True) -> np.ndarray:
    """Effective sample size of draws (..., chains, iterations): S / τ̂ with the multi-chain
    autocorrelation estimate ρ̂_t = 1 − (W − mean_m s²_m ρ̂_{t,m}) / V̂ and Geyer's initial
    monotone positive sequence (Vehtari et al. 2021 §3.2; Stan's ``ess_basic``). Chains are
    split in halves first unless ``split=False``."""
    s = split_chains(x) if split else np.asarray(x, dtype=float)
    m, n = s.shape[-2:]
    acov = _autocovariance(s)                      # (..., M, N)
    chain_var = acov[..., 0] * n / (n - 1)         # s²_m
    w = chain_var.mean(axis=-1)
    var_plus = w * (n - 1) / n
    if m > 1:
        var_plus = var_plus + s.mean(axis=-1).var(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (w[..., None] - (acov * (n / (n - 1))).mean(axis=-2)) / var_plus[..., None]
    rho[..., 0] = 1.0
    # Geyer: sums of adjacent pairs P_k = ρ_2k + ρ_2k+1, kept while positive, made monotone
    k = n // 2
    pairs = rho[..., 0:2 * k:2] + rho[..., 1:2 * k:2]  # (..., k)
    positive = np.cumprod(pairs > 0, axis=-1).astype(bool)
    mono = np.minimum.accumulate(np.where(positive, pairs, np.inf), axis=-1)
    total = np.sum(np.where(positive, mono, 0.0), axis=-1)
    tau = -1.0 + 2.0 * total
    # Stan caps τ̂ below at 1/log10(S) (antithetic chains)
    tau = np.maximum(tau, 1.0 / np.log10(m * n))
    with np.errstate(invalid="ignore"):
        out = m * n / tau
    return np.where(var_plus > 0, out, np.nan)
