"""Where each mechanism's floating-point arithmetic stays finite (issue 23): the privacy values a
study may sweep are checked against these ranges before anything runs, so a value such as
ε = 1e308 is one line naming the key, not overflowing tasks.

Doubles reach about 1.8e308 (e^709.8), int64 about 9.2e18. The ε of one mechanism call enters
as a scale Δ/ε (Laplace and its bounded variant, Chaudhuri–Monteleoni, the private SVM's
Laplace), as exponents u·ε/(2Δ) and the ledger's draws × ε (exponential), as e^ε or e^(ε/n)
(the analytic Gaussian σ, the Dirichlet and McClure–Reiter pseudo-counts, the smoothed
histogram's weight, the ℓ2-ball's radius), or as the success probability 1 − e^(−ε/Δ) of two
int64 geometric draws (the geometric mechanism: below 1e-15 the draws saturate and the noise
is silently 0). Each range below was measured at both ends with moderate inputs (|scores|,
counts, Δ ≤ 1e3; tests/harness/test_bad_data_input.py).

A method divides its privacy value over sets, statistics and draws by at most ``HEADROOM``
before a call, and never calls with more than its privacy value, so a study's privacy values
must lie in :func:`method_range`.
"""

from __future__ import annotations

#: mechanism → (smallest, largest) ε of one call for which its arithmetic stays finite
MECHANISM_RANGE: dict[str, tuple[float, float]] = {
    "laplace": (1e-150, 1e150),
    "bounded_laplace": (1e-150, 1e150),
    "exponential": (1e-150, 1e150),
    "chaudhuri_monteleoni": (1e-150, 1e150),
    "private_svm_laplace": (1e-150, 1e150),
    "geometric": (1e-15, 1e150),
    "gaussian": (1e-150, 700.0),
    "dirichlet_prior": (1e-150, 700.0),
    "mcclure_reiter_prior": (1e-150, 700.0),
    "smoothed_histogram": (1e-150, 700.0),
    "l2_ball": (1e-150, 700.0),
}
#: the most by which a method divides its privacy value before one mechanism call (sets m,
#: statistics and draws per set)
HEADROOM = 1e3


def method_range(mechanisms=None) -> tuple[float, float]:
    """The privacy values (of any privacy parameter: ε, ε per draw, ...) for which a method
    using ``mechanisms`` (names of ``MECHANISM_RANGE``; default: all of them) keeps every
    mechanism call finite."""
    names = list(MECHANISM_RANGE) if mechanisms is None else list(mechanisms)
    lo = max(MECHANISM_RANGE[n][0] for n in names)
    hi = min(MECHANISM_RANGE[n][1] for n in names)
    return lo * HEADROOM, hi
