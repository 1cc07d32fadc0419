"""Where each mechanism's floating-point arithmetic stays finite (issue 23): the privacy values a
study may sweep are checked against these ranges before anything runs, so a value such as
ε = 1e308 is one line naming the key, not overflowing tasks.

Doubles reach about 1.8e308. Each mechanism of this package multiplies or divides by the ε of
one call (one statistic, one set, one draw):

* Laplace, bounded Laplace, geometric, Chaudhuri–Monteleoni, private SVM: the scale Δ/ε (and
  its logarithm in the geometric's e^(−ε/Δ));
* exponential (Gumbel-max): the exponents u·ε/(2Δ) and the ledger's draws × ε;
* Gaussian: σ from ε, δ and Δ (the analytic calibration solves in ε/Δ);
* privacy-calibrated priors (Dirichlet pseudo-counts, pseudo-posterior weights): counts × ε.

With ε of one call within ``MECHANISM_RANGE`` (powers of ten) and scores, counts,
sensitivities and draw counts below 1e150 in magnitude, every one of these stays finite. A
method splits or multiplies its privacy value over sets, draws and statistics by at most
10^``HEADROOM``, so the privacy values of a study must lie in :func:`method_range`.
"""

from __future__ import annotations

#: mechanism → (smallest, largest) ε of one call for which its arithmetic stays finite, as
#: powers of ten
MECHANISM_RANGE: dict[str, tuple[int, int]] = {
    "laplace": (-150, 150),
    "bounded_laplace": (-150, 150),
    "geometric": (-150, 150),
    "exponential": (-150, 150),
    "gaussian": (-150, 150),
    "chaudhuri_monteleoni": (-150, 150),
    "private_svm_laplace": (-150, 150),
    "dirichlet_prior": (-150, 150),
    "pseudo_posterior": (-150, 150),
}
#: the most by which a method divides or multiplies its privacy value before a mechanism call,
#: as a power of ten (sets m, draws per set, statistics per set, records: all far below 1e50)
HEADROOM = 50


def method_range(mechanisms=None) -> tuple[float, float]:
    """The privacy values (of any privacy parameter: ε, ε per draw, ...) for which a method
    using ``mechanisms`` (names of ``MECHANISM_RANGE``; default: all of them) keeps every
    mechanism call finite."""
    names = list(MECHANISM_RANGE) if mechanisms is None else list(mechanisms)
    lo = max(MECHANISM_RANGE[n][0] for n in names) + HEADROOM
    hi = min(MECHANISM_RANGE[n][1] for n in names) - HEADROOM
    return float(f"1e{lo}"), float(f"1e{hi}")
