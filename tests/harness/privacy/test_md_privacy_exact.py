"""The Multinomial-Dirichlet release (MD; Bowen & Liu §3.2.1) and the limits of a black-box audit.

A planted bug that quarters MD's prior pseudo-count α* = n/(e^{ε/m} − 1) makes each set spend
log(1 + 4(e^{ε/m} − 1)) instead of ε/m (3.2 ε in total at ε = 1, m = 5), yet the empirical
audit of tests/harness/privacy/test_privacy_release_audit.py passes it. This file shows why no
black-box audit of that size can see it, and adds the guard that does.

Why the audit is blind. Given the data, one MD set of n records over two cells has k ones with
the beta-binomial law BB(n, n₁ + α, n₀ + α). For neighbours x = (n₀, n₁) and x′ = (n₀ − 1, n₁ + 1)
the likelihood ratio P(k | x)/P(k | x′) = (n − k + n₀ − 1 + α)(n₁ + α) / ((k + n₁ + α)(n₀ − 1 + α))
is monotone in k, so the tail events {k ≤ t} and {k ≥ t} are the most discriminating events of
every probability level (Neyman–Pearson), and scanning them is exhaustive. The worst case,
log(1 + n/α), sits at k = 0 with x′ holding every record in one cell: an output of probability
far below anything a sample can reach. Over the reachable tails the realised loss of the
quartered variant stays below the claimed ε even for a single set at full budget on the most
favourable pair (m = 1, records at the boundary): a Clopper–Pearson bound at 200 000 samples can
at best reach about 0.64 at ε = 1 (computed exactly below), and several million samples would be
needed for a thin margin. With m = 5 the loss is split over five sets and is smaller still.

The guard. The privacy of MD rests on one number, α, and the rest (a Dirichlet draw, then a
multinomial one) has a known law. So the test below runs the real release, records the Dirichlet
parameters the code hands to ``dirichlet_draw``, and computes the exact worst-case privacy loss
of the release from them: the maximum over neighbouring pairs of the sum over the m sets of the
largest per-set log likelihood ratio. It must equal the claimed ε; the quartered variant gives
3.17 at ε = 1 and fails, wherever in the code the pseudo-count is changed.
"""

import numpy as np
import pytest
from scipy.stats import beta as beta_dist
from scipy.stats import betabinom

from harness.data import CountBatch
from harness.synthesizers import make_synthesizer, prior_based

N = 40


def _recorded_alphas(monkeypatch, epsilon, m=5, quarter=False):
    """Run the real MD release on one data set; return the pseudo-count α of each of the m sets,
    read from the Dirichlet parameters the code passes on (counts + α)."""
    seen = []
    real_draw = prior_based.dirichlet_draw

    def recording_draw(params, rng):
        seen.append(np.array(params, dtype=float))
        return real_draw(params, rng)

    monkeypatch.setattr(prior_based, "dirichlet_draw", recording_draw)
    if quarter:  # the planted bug: a quartered pseudo-count, the ledger still claiming ε
        real_alpha = prior_based.dirichlet_prior_pseudocount
        monkeypatch.setattr(prior_based, "dirichlet_prior_pseudocount",
                            lambda *a, **k: real_alpha(*a, **k) / 4)
    counts = np.array([[N - 10, 10]])
    synth = make_synthesizer("multinomial_dirichlet", m=m)
    release = synth.release(CountBatch(counts, N), epsilon, np.random.default_rng(0))
    assert release.ledger.total_epsilon() == pytest.approx(epsilon)  # the claim
    assert len(seen) == m
    alphas = [p - counts for p in seen]
    for a in alphas:  # one symmetric pseudo-count per set
        assert np.allclose(a, a[0, 0])
    return [float(a[0, 0]) for a in alphas]


def exact_worst_case_loss(alphas: list[float], n: int = N) -> float:
    """Exact ε realised by an MD release of two cells with per-set pseudo-counts ``alphas``:
    max over neighbouring pairs (n₁, n₁ + 1) of Σ_sets max_k |log BB(k | x) − log BB(k | x′)|
    (the sets are independent given the data, and every set's largest ratio falls on the same
    output, k = 0 or k = n, for the same pair)."""
    k = np.arange(n + 1)
    worst = 0.0
    for n1 in range(n):
        total = 0.0
        for a in alphas:
            lx = betabinom.logpmf(k, n, n1 + a, n - n1 + a)
            lxp = betabinom.logpmf(k, n, n1 + 1 + a, n - n1 - 1 + a)
            total += np.max(np.abs(lx - lxp))
        worst = max(worst, total)
    return worst


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_md_release_realises_exactly_its_epsilon(monkeypatch, epsilon):
    alphas = _recorded_alphas(monkeypatch, epsilon)
    realised = exact_worst_case_loss(alphas)
    print(f"MD m=5, ε = {epsilon:g}: exact realised ε = {realised:.6f}")
    assert realised == pytest.approx(epsilon, rel=1e-9)


def test_quartered_pseudo_count_is_caught_exactly(monkeypatch):
    alphas = _recorded_alphas(monkeypatch, 1.0, quarter=True)
    realised = exact_worst_case_loss(alphas)
    expected = 5 * np.log1p(4 * np.expm1(0.2))
    print(f"MD m=5 with α*/4, claimed ε = 1: exact realised ε = {realised:.4f}")
    assert realised == pytest.approx(expected, rel=1e-9)
    assert realised > 3.0  # the release claims 1


def _best_tail_bound(alpha: float, n_validation: int, level: float = 0.025) -> float:
    """The largest Clopper–Pearson lower bound on the log probability ratio that any tail event
    of one MD set (m = 1) can earn with ``n_validation`` samples per data set, at the expected
    counts, on the most favourable neighbouring pair: x′ with every record in one cell."""
    k = np.arange(N + 1)
    px = betabinom.pmf(k, N, 1 + alpha, N - 1 + alpha)
    pxp = betabinom.pmf(k, N, alpha, N + alpha)
    best = -np.inf
    tails = ((np.cumsum(px), np.cumsum(pxp)),
             (np.cumsum(px[::-1])[::-1], np.cumsum(pxp[::-1])[::-1]))
    for cx, cxp in tails:
        for num, den in ((cx, cxp), (cxp, cx)):
            kn, kd = num * n_validation, den * n_validation
            lo = beta_dist.ppf(level, np.maximum(kn, 1), n_validation - kn + 1)
            hi = beta_dist.ppf(1 - level, kd + 1, np.maximum(n_validation - kd, 1))
            best = max(best, float(np.nanmax(np.log(lo / hi))))
    return best


def test_no_black_box_audit_of_this_size_can_see_the_quartered_pseudo_count():
    epsilon = 1.0
    alpha = N / np.expm1(epsilon)
    rows = []
    for n_validation in (100_000, 1_000_000):  # the audit validates on half its 200 000 samples
        correct = _best_tail_bound(alpha, n_validation)
        quartered = _best_tail_bound(alpha / 4, n_validation)
        rows.append((n_validation, correct, quartered))
        print(f"m=1, ε = 1, {n_validation} validation samples: best reachable bound "
              f"{correct:.3f} (correct α), {quartered:.3f} (α/4, truly "
              f"{np.log1p(4 * np.expm1(epsilon)):.2f}-DP)")
    # even on the most favourable configuration the quartered variant stays below the claim
    assert all(q < epsilon for _, _, q in rows)
    # while the true worst-case loss is twice the claim, and the audit family does respond to it
    assert np.log1p(4 * np.expm1(epsilon)) > 2 * epsilon
    assert all(q > c + 0.3 for _, c, q in rows)
