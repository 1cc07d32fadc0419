"""The DIP synthesizer (spec 004 §1; §7.3 required unit tests 2, 3 and 5): known-F output
follows F (continuous and discrete, ε from 0.1 to 10), the multivariate-normal oracle keeps the
mean and covariance, the output density ratio of two inputs is at most e^{ε_col} on a grid,
cube-DIP rows lie in exactly one hold-out cube and keep the hold-out marginals; the ledger
(p entries of ε/p, scale p/ε, substitution), the hold-out split and bad settings."""

import dataclasses

import numpy as np
import pytest
from float_compare import assert_close_ulps
from scipy import stats

from harness.data import RecordBatch
from harness.errors import ConfigError
from harness.privacy import PrivacyLedger
from harness.synthesizers import make_synthesizer
from harness.synthesizers.dip import privatize_holdout
from harness.synthesizers.dip_transform import (
    ColumnKind,
    continualize,
    ecdf_cdf,
    ecdf_knots,
    ecdf_ppf,
    uniform_laplace_cdf,
)


def release(data, epsilon=1.0, seed=0, parts=None, **params):
    synth = make_synthesizer("dip", **params)
    return synth.release(RecordBatch(np.asarray(data, dtype=float)), epsilon,
                         np.random.default_rng(seed), parts=parts)


# --- unit test 2: known F ------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("dist", [stats.norm(2, 3), stats.expon(), stats.beta(2, 5)],
                         ids=["normal", "exp", "beta"])
def test_known_continuous_f_output_follows_f(dist, epsilon):
    rng = np.random.default_rng(10)
    z = dist.rvs(size=(20, 1000, 1), random_state=rng)
    out = release(z, epsilon, seed=11, reference="known", distribution=dist).sets.values
    assert out.shape == (20, 1, 1000, 1)
    assert stats.kstest(out.ravel(), dist.cdf).pvalue > 1e-3
    # privatization really moves the records (more at small ε)
    moved = np.mean(np.abs(out[:, 0, :, 0] - z[..., 0]) > 1e-9)
    assert moved > 0.99


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("dist", [stats.poisson(3), stats.bernoulli(0.1), stats.geom(0.2, loc=-1),
                                  stats.binom(5, 0.5)], ids=["pois", "bern", "geom", "binom"])
def test_known_discrete_f_output_follows_f(dist, epsilon):
    rng = np.random.default_rng(12)
    z = dist.rvs(size=(20, 1000, 1), random_state=rng).astype(float)
    out = release(z, epsilon, seed=13, reference="known", distribution=dist).sets.values.ravel()
    support = np.arange(out.min(), out.max() + 1)
    assert np.all(dist.pmf(out) > 0)  # every released value is on the support
    observed = np.array([(out == k).sum() for k in support])
    expected = dist.pmf(support) * out.size
    keep = expected >= 5  # pool the tails for the chi-square test
    obs = np.append(observed[keep], out.size - observed[keep].sum())
    exp = np.append(expected[keep], out.size - expected[keep].sum())
    assert stats.chisquare(obs[exp > 0], exp[exp > 0]).pvalue > 1e-3


@pytest.mark.parametrize("order", ["given", "random"])
@pytest.mark.parametrize("epsilon", [0.2, 5.0])
def test_multivariate_normal_oracle_keeps_mean_and_covariance(order, epsilon):
    mean = np.array([0.0, 1.0, -2.0])
    cov = np.array([[1.0, 0.6, 0.2], [0.6, 2.0, -0.5], [0.2, -0.5, 1.5]])
    mvn = stats.multivariate_normal(mean, cov)
    z = mvn.rvs(size=(40, 2500), random_state=14)
    rel = release(z, epsilon, seed=15, reference="known", distribution=mvn, order=order)
    out = rel.sets.values[:, 0].reshape(-1, 3)
    n = out.shape[0]
    assert np.all(np.abs(out.mean(0) - mean) < 4 * np.sqrt(np.diag(cov) / n))
    se = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / n)
    assert np.all(np.abs(np.cov(out.T) - cov) < 4 * se)
    # and the whole law: every coordinate passes KS against its normal marginal
    for j in range(3):
        assert stats.kstest(out[:, j], stats.norm(mean[j], np.sqrt(cov[j, j])).cdf).pvalue > 1e-3
    assert len(rel.ledger.entries) == 3


# --- unit test 3: density ratio ------------------------------------------------------------------


def _g_inverse(y, b):
    lo, hi = np.full_like(y, -60.0 * b - 1), np.full_like(y, 60.0 * b + 2)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        below = uniform_laplace_cdf(mid, b) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def _output_bin_probabilities(u, edges_g, b):
    """P(G(u + e) ∈ (g_k, g_{k+1}]) for e ~ Laplace(0, b), from the Laplace CDF at G⁻¹."""
    w = _g_inverse(edges_g, b)
    cdf = stats.laplace(loc=u[:, None], scale=b).cdf(w[None, :])
    return np.diff(cdf, axis=1)


@pytest.mark.parametrize("p, epsilon", [(1, 1.0), (4, 2.0), (1, 8.0)])
def test_density_ratio_of_two_inputs_is_at_most_e_eps_col(p, epsilon):
    """Any output event of the hold-out DIP (eq. (8)) is an interval of G-levels; for every pair
    of inputs (inside and outside the hold-out range) and every bin of an output grid, the
    probability ratio is ≤ e^{ε/p}. A scale 1/ε instead of p/ε (pitfall 1) breaks it."""
    rng = np.random.default_rng(16)
    knots = ecdf_knots(rng.normal(size=30))
    inputs = np.concatenate([np.linspace(-4, 4, 41), knots[[0, -1]]])
    u = ecdf_cdf(knots, inputs)
    assert u.min() == 0.0 and u.max() == 1.0  # both extremes are reached
    out_grid = np.linspace(knots[0], knots[-1], 60)
    edges_g = ecdf_cdf(knots, out_grid)  # Ĉ is increasing: output bins ↔ G-level bins
    edges_g = np.concatenate([[1e-300], edges_g[1:-1], [1 - 1e-16]])
    b = p / epsilon
    probs = _output_bin_probabilities(u, edges_g, b)
    ratio = np.log(probs.max(axis=0) / probs.min(axis=0))
    assert ratio.max() <= epsilon / p + 1e-6
    assert ratio.max() > 0.9 * epsilon / p  # the bound is nearly attained in the tails
    if p > 1:
        wrong = _output_bin_probabilities(u, edges_g, 1 / epsilon)
        assert np.log(wrong.max(axis=0) / wrong.min(axis=0)).max() > 1.5 * epsilon / p
    # the released value is the G-level pushed through Ĉ⁻¹: check that map on the same grid
    assert np.allclose(ecdf_cdf(knots, ecdf_ppf(knots, edges_g[1:-1])), edges_g[1:-1])


# --- unit test 5: cube DIP -----------------------------------------------------------------------


@pytest.mark.parametrize("conditional", ["strict", "relaxed"])
def test_cube_dip_rows_lie_in_exactly_one_holdout_cube(conditional):
    rng = np.random.default_rng(17)
    cov = np.array([[1.0, 0.7, 0.3], [0.7, 1.0, 0.5], [0.3, 0.5, 1.0]])
    z = rng.multivariate_normal(np.zeros(3), cov, size=(5, 400))
    holdout, values = z[:, :150], z[:, 150:]
    order = np.tile(np.arange(3), (5, 1))
    out, diag = privatize_holdout(values, holdout, [ColumnKind()] * 3, 1.0, rng,
                                  PrivacyLedger(relation="substitution"), order, conditional)
    knots = ecdf_knots(np.swapaxes(holdout, 1, 2))  # (R, p, m + 1)
    for r in range(5):
        rank = np.argsort(np.argsort(holdout[r], axis=0), axis=0) + 1  # (m, p)
        lo = np.take_along_axis(knots[r].T, rank - 1, axis=0)  # cube lower corners (m, p)
        hi = np.take_along_axis(knots[r].T, rank, axis=0)
        inside = np.all((out[r][:, None, :] > lo[None]) & (out[r][:, None, :] <= hi[None]), -1)
        assert np.all(inside.sum(axis=1) == 1)
        # released marginals ≈ hold-out marginals (two-sample KS per column)
        for j in range(3):
            assert stats.ks_2samp(out[r][:, j], holdout[r][:, j]).pvalue > 1e-3
    assert set(diag) == {"first_coordinate_outside_holdout_range",
                         "records_outside_their_holdout_cube"}


def test_cube_dip_keeps_the_holdout_dependence():
    """The chain keeps the joint law of the hold-out: correlation of released ≈ hold-out's."""
    rng = np.random.default_rng(18)
    z = rng.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]], size=(10, 2000))
    rel = release(z, 1.0, seed=19, holdout_share=0.5)
    out = rel.sets.values[:, 0]
    corr = [np.corrcoef(o.T)[0, 1] for o in out]
    assert np.mean(corr) == pytest.approx(0.8, abs=0.03)


def test_discrete_columns_are_continualized_and_released_on_the_support():
    rng = np.random.default_rng(20)
    x = np.stack([rng.poisson(5, (8, 300)), rng.binomial(1, 0.5, (8, 300)),
                  rng.normal(0, 10, (8, 300))], -1).astype(float)
    kinds = [{"kind": "discrete", "start": 0}, {"kind": "discrete", "support": [0, 1]},
             "continuous"]
    rel = release(x, 1.0, seed=21, columns=kinds, holdout_share=0.15, order="random")
    out = rel.sets.values[:, 0]
    assert out.shape == (8, 255, 3) and rel.sets.n == 300 - 45
    assert np.all(out[..., 0] == np.round(out[..., 0])) and out[..., 0].min() >= 0
    assert set(np.unique(out[..., 1])) <= {0.0, 1.0}
    assert abs(out[..., 1].mean() - 0.5) < 0.05 and abs(out[..., 0].mean() - 5) < 0.3
    with pytest.raises(ConfigError, match=r"columns\[1\]: value 2.0 is not on"):
        release(np.where(x == 1, 2.0, x), 1.0, columns=kinds)


# --- ledger, split, references, bad input --------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.5, 3.0])
@pytest.mark.parametrize("reference", ["holdout", "known", "public"])
def test_ledger_p_entries_of_eps_over_p_and_holdout_size(reference, epsilon):
    rng = np.random.default_rng(22)
    z = rng.normal(size=(3, 200, 4))
    extra = {"holdout": {"holdout_share": 0.15}, "known": {"distribution": stats.norm()},
             "public": {}}[reference]
    parts = {"holdout": RecordBatch(rng.normal(size=(3, 50, 4)))} if reference == "public" \
        else None
    rel = release(z, epsilon, parts=parts, reference=reference, **extra)
    entries = rel.ledger.entries
    assert rel.epsilon == epsilon and rel.ledger.total_epsilon() == pytest.approx(epsilon)
    assert len(entries) == 4
    assert all(e.epsilon == pytest.approx(epsilon / 4) and e.sensitivity == 1.0
               and e.scale == pytest.approx(4 / epsilon) and e.relation == "substitution"
               for e in entries)
    assert all("given the" in e.note for e in entries)
    n_out = {"holdout": 200 - 30, "known": 200, "public": 200}[reference]
    assert rel.sets.values.shape == (3, 1, n_out, 4)
    if reference == "holdout":
        assert np.all(rel.diagnostics["holdout_size"] == 30)
        # the released records are privatized versions of the kept rows only: never a hold-out row
        assert not np.any(np.isin(rel.sets.values, z))


def test_reproducible_and_seed_dependent():
    z = np.random.default_rng(23).normal(size=(2, 100, 2))
    a, b, c = (release(z, 1.0, seed=s).sets.values for s in (5, 5, 6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("params, match", [
    ({"reference": "oracle"}, r"reference: 'oracle' is not allowed \(allowed: holdout, "
                              r"public, known\)"),
    ({"order": "sorted"}, "order: 'sorted' is not allowed"),
    ({"conditional": "loose"}, "conditional: 'loose' is not allowed"),
    ({"d0": "one"}, "d0: 'one' is not allowed"),
    ({"holdout_share": 1.5}, r"holdout_share: must be a number in \(0, 1\)"),
    ({"reference": "known"}, "distribution: reference='known' needs"),
    ({"m": 2}, "m: unknown parameter of dip"),
])
def test_bad_settings_are_one_line_config_errors(params, match):
    with pytest.raises(ConfigError, match=match) as info:
        make_synthesizer("dip", **params)
    assert "\n" not in str(info.value)


def test_bad_data_are_one_line_config_errors():
    z = np.random.default_rng(24).normal(size=(1, 10, 1))
    with pytest.raises(ConfigError, match="holdout_share: 0.05 of N = 10 records gives a hold-out"):
        release(z, holdout_share=0.05)
    tied = np.round(np.random.default_rng(25).normal(size=(1, 200, 1)), 1)
    with pytest.raises(ConfigError, match=r"columns\[0\]: the hold-out has tied values"):
        release(tied)
    out = release(tied, tie_jitter=0.1).sets.values  # ties broken inside the rounding unit
    assert out.shape == (1, 1, 150, 1)
    with pytest.raises(ConfigError, match="parts: dip needs the original data's part 'holdout'"):
        release(z, reference="public")


def test_continualized_holdout_pit_is_uniform_so_released_discrete_law_matches():
    """Hold-out DIP of a Bernoulli column: the released share of ones ≈ the hold-out's."""
    rng = np.random.default_rng(26)
    z = rng.binomial(1, 0.3, (30, 500, 1)).astype(float)
    kind = {"kind": "discrete", "support": [0, 1]}
    out = release(z, 1.0, seed=27, columns=kind, holdout_share=0.5).sets.values
    assert out.mean() == pytest.approx(0.3, abs=0.02)
    v = continualize(z[0, :, 0], ColumnKind("discrete", (0.0, 1.0)), rng)
    assert np.all((v > -1) & (v <= 1))


@pytest.mark.parametrize("conditional, expected_second", [
    ("strict", 10 + 10 * uniform_laplace_cdf(0.0, 1.0)),
    ("relaxed", 10 + 10 * uniform_laplace_cdf(1.0, 1.0))])
def test_chain_by_hand_with_the_noise_switched_off(conditional, expected_second, monkeypatch):
    """Hold-out rows (1, 10), (2, 30), (3, 20): knots (0, 1, 2, 3] and (0, 10, 20, 30] (d_0 one
    mean spacing below). ε = 2, p = 2, b = 1, noise replaced by 0, so w = u:

    * (1.5, 25): u1 = 0.5, G(0.5) = 0.5 → row 2 (its own), cell (20, 30], u2 = 0.5 → (1.5, 25);
    * (3.5, 25): above the range, u1 = 1, g1 = G(1) → k = ⌈3·G(1)⌉ = 3 → row (3, 20), whose
      column-2 cell is (10, 20]; strict: u2 = 0 (no cube holds x1), relaxed: the end row (3, 20),
      u2 = clip((25 − 10)/10) = 1; released Ṽ2 = 10 + 10·G(u2)."""
    import harness.synthesizers.dip as dip_module

    def no_noise(values, *, sensitivity, epsilon, rng, ledger, statistic, note=""):
        assert sensitivity == 1.0
        return np.asarray(values, dtype=float)

    monkeypatch.setattr(dip_module, "laplace_mechanism", no_noise)
    holdout = np.array([[[1.0, 10.0], [2.0, 30.0], [3.0, 20.0]]])
    values = np.array([[[1.5, 25.0], [3.5, 25.0]]])
    out, diag = privatize_holdout(values, holdout, [ColumnKind()] * 2, 2.0,
                                  np.random.default_rng(0), PrivacyLedger(), np.array([[0, 1]]),
                                  conditional)
    g1 = uniform_laplace_cdf(1.0, 1.0)
    assert np.allclose(out[0, 0], [1.5, 25.0])
    assert np.allclose(out[0, 1], [2 + (3 * g1 - 2), expected_second])
    assert diag["first_coordinate_outside_holdout_range"][0] == 0.5


def test_upper_tail_goes_through_the_survival_function():
    """Spec §1.2 numerics: for w far above 1, G(w) rounds to 1 and F⁻¹(G(w)) would be +inf;
    the survival S(w) = G(1 − w) and F.isf keep the released value finite and exact."""
    from harness.synthesizers.dip import _inverse
    from harness.synthesizers.dip_transform import noisy_level

    b = 0.5
    w = np.array([1.0 + 25.0, -25.0])  # noise of 50 scales: probability e^{-50} each
    g, s = noisy_level(w, b)
    out = _inverse(stats.norm(), g, s)
    tail = 0.5 * b * np.exp(-25.0 / b) * -np.expm1(-1.0 / b)
    assert np.all(np.isfinite(out))
    assert out[0] == pytest.approx(stats.norm.isf(tail), rel=1e-9)
    assert out[1] == pytest.approx(-out[0], rel=1e-9)  # symmetric lower tail through ppf


def test_the_split_is_prepared_once_and_shared_across_epsilon():
    z = np.random.default_rng(28).normal(size=(2, 40, 1))
    synth = make_synthesizer("dip", holdout_share=0.25)
    batch = RecordBatch(z)
    prepared = synth.prepare(batch, np.random.default_rng(1))
    hold, kept = prepared.holdout_rows, prepared.kept_rows
    assert hold.shape == (2, 10) and kept.shape == (2, 30)
    assert all(set(h) | set(k) == set(range(40)) for h, k in zip(hold, kept, strict=True))
    # the released records are kept rows, privatized against the hold-out rows: at a huge ε
    # every released value sits within the cell of the hold-out ECDF holding its original
    for eps in (1e6, 1e7):
        rel = synth.release(batch, eps, np.random.default_rng(2), prepared=prepared)
        knots = ecdf_knots(np.take_along_axis(z[..., 0], hold, 1))
        orig = np.take_along_axis(z[..., 0], kept, 1)
        out = rel.sets.values[:, 0, :, 0]
        assert np.allclose(ecdf_cdf(knots, out), np.clip(ecdf_cdf(knots, orig), 0, 1),
                           atol=1e-4)


def test_a_random_column_order_is_the_given_order_on_permuted_columns():
    """Chain coordinate l of replicate r is column order[r, l]: the release equals the one of
    the columns permuted by hand in the given order, put back (continuous columns: no draws
    before the noise, so both runs use the same draws), to rounding: permuted columns are
    arrays of other strides, for which numpy may pick another SIMD kernel of exp and log."""
    z = np.random.default_rng(6).normal(size=(2, 70, 4)) @ np.triu(np.ones((4, 4)))
    holdout, values = z[:, :30], z[:, 30:]
    perm = np.array([2, 0, 3, 1])
    kinds = [ColumnKind()] * 4
    out, diag = privatize_holdout(values, holdout, kinds, 2.0, np.random.default_rng(1),
                                  PrivacyLedger(relation="substitution"), np.tile(perm, (2, 1)))
    by_hand, diag_hand = privatize_holdout(
        values[..., perm], holdout[..., perm], kinds, 2.0, np.random.default_rng(1),
        PrivacyLedger(relation="substitution"), np.tile(np.arange(4), (2, 1)))
    want = by_hand[..., np.argsort(perm)]
    assert_close_ulps(out, want, ulps=64, scale=np.abs(want).max())
    for key, value in diag.items():
        np.testing.assert_array_equal(value, diag_hand[key])


@pytest.mark.parametrize("p", [1, 3])
def test_cache_sized_chunks_give_the_same_release(p, monkeypatch):
    """The chunked steps (G, Ĉ, Ĉ⁻¹, the later coordinates by blocks of replicates) at a chunk
    of 7 values, so that chunks split rows and blocks hold one replicate, against one chunk
    for everything: the same numbers, to rounding (chunks are arrays of other sizes and
    strides, for which numpy may pick another SIMD kernel of exp and log)."""
    import harness.synthesizers.dip as dip_module
    import harness.synthesizers.dip_transform as transform_module

    rng = np.random.default_rng(8)
    z = np.concatenate([rng.normal(size=(3, 50, 1)), rng.poisson(3, (3, 50, 1)),
                        rng.binomial(1, 0.4, (3, 50, 1))], -1)[..., :p]
    kinds = ["continuous", {"kind": "discrete", "start": 0},
             {"kind": "discrete", "support": [0, 1]}]
    params = {"holdout_share": 0.3, "order": "random", "columns": kinds[:p]}
    runs = []
    for chunk in (10**9, 7):
        monkeypatch.setattr(transform_module, "CHUNK", chunk)
        monkeypatch.setattr(dip_module, "CHUNK", chunk)
        runs.append(release(z, 1.5, 4, **params))
    want = runs[0].sets.values
    assert_close_ulps(runs[1].sets.values, want, ulps=64, scale=np.abs(want).max())
    x = rng.normal(size=(2, 30))
    knots = ecdf_knots(rng.normal(size=(2, 12)))
    assert_close_ulps(uniform_laplace_cdf(x, [0.7]), uniform_laplace_cdf(x, 0.7))
    monkeypatch.setattr(transform_module, "CHUNK", 10**9)
    whole = ecdf_cdf(knots, x), ecdf_ppf(knots, stats.norm.cdf(x))
    monkeypatch.setattr(transform_module, "CHUNK", 7)
    assert_close_ulps(ecdf_cdf(knots, x), whole[0])
    assert_close_ulps(ecdf_ppf(knots, stats.norm.cdf(x)), whole[1], scale=np.abs(whole[1]).max())


def test_the_prepared_reference_stage_gives_the_release_of_one_computed_per_epsilon():
    """R1's case (one continuous column): prepare computes the ε-free reference stage once;
    a release from it equals the release of a synthesizer that computes it at each ε."""
    z = RecordBatch(np.random.default_rng(9).lognormal(size=(2, 80, 1)))
    synth = make_synthesizer("dip", holdout_share=0.25)
    prepared = synth.prepare(z, np.random.default_rng(1))
    assert prepared.stage is not None
    for eps in (1.0, 3.0):
        a = synth.release(z, eps, np.random.default_rng(2), prepared=prepared)
        b = synth.release(z, eps, np.random.default_rng(2),
                          prepared=dataclasses.replace(prepared, stage=None))
        np.testing.assert_array_equal(a.sets.values, b.sets.values)
