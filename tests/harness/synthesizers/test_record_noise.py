"""The competitors of DIP (spec 004 §2): LRM, OPM (Duchi et al. ℓ2-ball and ℓ∞ mean) and EXM —
calibration against hand computations, the ℓ2 mechanism's unbiasedness and sphere radius, the
residual route, grid rounding, ledgers and bad settings. Their privacy audits are in
tests/harness/privacy/test_dip_audit.py."""

import math

import numpy as np
import pytest
from float_compare import assert_close_ulps
from scipy import stats

from harness.data import RecordBatch
from harness.errors import ConfigError
from harness.inference.regression import ols_fitted
from harness.privacy import PrivacyLedger
from harness.privacy.minimax import l2_ball_mechanism, l2_sphere_radius, truncation_level
from harness.synthesizers import make_synthesizer


def release(name, data, privacy=1.0, seed=0, **params):
    return make_synthesizer(name, **params).release(RecordBatch(np.asarray(data, dtype=float)),
                                                    privacy, np.random.default_rng(seed))


@pytest.mark.parametrize("d", [1, 3, 10])
def test_l2_ball_mechanism_is_unbiased_and_on_the_sphere(d):
    rng = np.random.default_rng(1)
    v = rng.normal(size=d)
    v *= 0.7 / np.linalg.norm(v)  # inside the unit ball
    out = l2_ball_mechanism(np.tile(v, (200_000, 1)), radius=1.0, epsilon=1.0, rng=rng,
                            ledger=PrivacyLedger(), statistic="v")
    big_b = l2_sphere_radius(1.0, 1.0, d)
    assert np.allclose(np.linalg.norm(out, axis=1), big_b)
    se = out.std(axis=0) / np.sqrt(out.shape[0])
    assert np.all(np.abs(out.mean(axis=0) - v) < 4.5 * se)


def test_l2_ball_mechanism_by_hand_vector_by_vector_with_a_zero_vector():
    """The record-level oracle, one vector at a time on the same stream order: the spare
    normals (drawn for every vector, used only by a zero vector's direction), the sign of Ṽ,
    the side T, then a uniform point on the sphere flipped onto T's side and scaled to B. The
    batched mechanism gives the same floats to a few ulps (its norms are batched reductions,
    whose SIMD kernel, and so the last bit, depends on the CPU)."""
    rng = np.random.default_rng(4)
    v = rng.normal(size=(5, 6))
    v[2] = 0.0
    v *= 0.9 / np.linalg.norm(v, axis=1).max()
    out = l2_ball_mechanism(v, radius=1.0, epsilon=0.8, rng=np.random.default_rng(7),
                            ledger=PrivacyLedger(), statistic="v")
    rng = np.random.default_rng(7)
    spare = rng.standard_normal(v.shape)
    up = rng.random(5) < 0.5 + np.linalg.norm(v, axis=1) / 2.0
    same_side = rng.random(5) < math.exp(0.8) / (1.0 + math.exp(0.8))
    normals = rng.standard_normal(v.shape)
    big_b = l2_sphere_radius(1.0, 0.8, 6)
    for i in range(5):
        norm = np.linalg.norm(v[i])
        direction = v[i] / norm if norm > 0 else spare[i] / np.linalg.norm(spare[i])
        tilde = direction if up[i] else -direction
        z = normals[i] / np.linalg.norm(normals[i])
        dot = np.sum(z * tilde)
        flip = dot <= 0 if same_side[i] else dot > 0
        assert_close_ulps(out[i], (-z if flip else z) * big_b)


def test_l2_sphere_radius_closed_forms():
    e = math.e
    assert l2_sphere_radius(2.0, 1.0, 1) == pytest.approx(2.0 * (e + 1) / (e - 1))
    # √π Γ(2)/Γ(3/2) = 2 at d = 2... and the d·Γ((d+1)/2)/Γ(d/2+1) form of third parties
    for d in (2, 5, 40):
        other = (math.sqrt(math.pi) / 2) * d * math.gamma((d + 1) / 2) / math.gamma(d / 2 + 1)
        assert l2_sphere_radius(1.0, 1.0, d) == pytest.approx((e + 1) / (e - 1) * other)
    assert np.isfinite(l2_sphere_radius(1.0, 1.0, 10_000_000))  # d = n of a large column


def test_l2_ball_mechanism_refuses_vectors_outside_the_ball():
    with pytest.raises(ValueError, match="outside the l2 ball"):
        l2_ball_mechanism(np.array([[2.0, 0.0]]), radius=1.0, epsilon=1.0,
                          rng=np.random.default_rng(0), ledger=PrivacyLedger(), statistic="v")


@pytest.mark.parametrize("rule, expected", [
    ("range", lambda z: z.max(1) - z.min(1)), ("max", lambda z: z.max(1)),
    ("symmetric", lambda z: 2 * np.abs(z).max(1)), (0.5, lambda z: np.full(z.shape[0], 0.5))])
def test_lrm_sensitivity_rules_and_ledger(rule, expected):
    rng = np.random.default_rng(2)
    z = rng.normal(3.0, 2.0, (1, 50_000, 2))
    rel = release("lrm", z, 2.0, sensitivity=rule)
    entries = rel.ledger.entries
    assert len(entries) == 2 and rel.ledger.total_epsilon() == pytest.approx(2.0)
    for col, entry in enumerate(entries):
        delta = float(expected(z[..., col])[0])
        assert entry.epsilon == pytest.approx(1.0) and entry.sensitivity == pytest.approx(delta)
        assert entry.relation == "substitution"
        assert ("not covered" in entry.note) == isinstance(rule, str)
        noise = rel.sets.values[0, 0, :, col] - z[0, :, col]
        assert np.mean(np.abs(noise)) == pytest.approx(delta / 1.0, rel=0.03)  # E|Lap(b)| = b


def test_lrm_residual_route_is_laplace_on_y_with_residual_scale_and_rounding():
    rng = np.random.default_rng(3)
    x = np.stack([rng.normal(0, 10, 4000), rng.binomial(1, 0.5, 4000)], -1)
    y = x.sum(-1) + rng.normal(size=4000)
    data = np.concatenate([x, y[:, None]], -1)[None]
    rel = release("lrm", data, 3.0, sensitivity=["symmetric", 1.0, "symmetric"], response=2,
                  round_to={1: [0, 1]})
    out = rel.sets.values[0, 0]
    assert set(np.unique(out[:, 1])) == {0.0, 1.0}
    resid_entry = rel.ledger.entries[-1]
    assert "residuals of column 2" in resid_entry.statistic
    assert resid_entry.epsilon == pytest.approx(1.0)
    # Ỹ = Ŷ + r̃ = Y + Laplace(2 max|r| (p+1)/ε): the noise on Y has that scale
    noise = out[:, 2] - y
    assert np.mean(np.abs(noise)) == pytest.approx(resid_entry.scale, rel=0.05)
    # the residuals are those of Y on the privatized columns (before their rounding)
    unrounded = release("lrm", data, 3.0, sensitivity=["symmetric", 1.0, "symmetric"],
                        response=2).sets.values[0, 0]
    assert np.array_equal(unrounded[:, 2], out[:, 2])
    resid = y - ols_fitted(unrounded[:, :2], y)
    assert resid_entry.sensitivity == pytest.approx(2 * np.abs(resid).max())


def test_opm_mean_linf_truncation_and_calibration():
    rng = np.random.default_rng(4)
    z = rng.exponential(2.0, (1, 30_000, 1))
    k = 4.0
    rel = release("opm", z, 1.0, variant="mean_linf", bound="moment", moment_k=k)
    r = np.mean(z**k) ** (1 / k)
    t = r * (30_000 * 1.0**2) ** (1 / (2 * k))
    assert truncation_level(r, 30_000, 1.0, k) == pytest.approx(t)
    entry = rel.ledger.entries[0]
    assert entry.sensitivity == pytest.approx(2 * t) and entry.scale == pytest.approx(2 * t)
    out = rel.sets.values[0, 0, :, 0]
    assert out.mean() == pytest.approx(np.clip(z, -t, t).mean(), abs=4 * 2 * t * 2 / 173)
    kinf = release("opm", z, 1.0, variant="mean_linf").ledger.entries[0]
    assert kinf.sensitivity == pytest.approx(2 * z.max())  # k = ∞: T = r = max|Z|


@pytest.mark.parametrize("variant, d", [("l2_vector", 400), ("l2_scalar", 1)])
def test_opm_l2_radius_is_sqrt_n_max_abs(variant, d):
    z = np.random.default_rng(5).normal(size=(3, 400, 2))
    rel = release("opm", z, 2.0, variant=variant)
    entries = rel.ledger.entries
    assert len(entries) == 2 and rel.ledger.total_epsilon() == pytest.approx(2.0)
    r = np.sqrt(400) * np.abs(z).max(axis=1)  # (3, 2)
    for col, entry in enumerate(entries):
        assert entry.sensitivity == pytest.approx(r[:, col].max())
        assert entry.scale == pytest.approx(l2_sphere_radius(r[:, col].max(), 1.0, d))
        assert f"d = {d}" in entry.note
    norms = np.linalg.norm(rel.sets.values[:, 0], axis=1)  # (3, 2): one sphere per column
    if variant == "l2_vector":
        assert np.allclose(norms, l2_sphere_radius(r, 1.0, d))
    else:
        assert np.allclose(np.abs(rel.sets.values[:, 0]), l2_sphere_radius(r, 1.0, 1)[:, None])


def test_opm_rounding_clips_to_the_grid():
    z = np.random.default_rng(6).choice(np.arange(0.5, 5.01, 0.5), size=(2, 300, 1))
    out = release("opm", z, 1.0, bound=5.0, round_to={0: list(np.arange(0.5, 5.01, 0.5))}
                  ).sets.values
    grid = np.arange(0.5, 5.01, 0.5)
    assert np.all(np.isin(out, grid))
    # per-coordinate outputs are ~ B/√n ≈ 230 in size: almost all clip to an edge (spec A16)
    assert np.mean((out == 0.5) | (out == 5.0)) > 0.95


@pytest.mark.parametrize("quality", ["count", "proportion"])
def test_exm_draw_probabilities_and_claim(quality):
    rng = np.random.default_rng(7)
    n = 40
    z = np.repeat([[0.0] * 25 + [1.0] * 10 + [3.0] * 5], 2000, axis=0)[..., None]
    rel = release("exm", z, 0.5, seed=8, quality=quality)
    counts = np.array([25, 10, 5])
    q = counts if quality == "count" else counts / n
    p = np.exp(0.5 * q / (2 * 3.0))  # Δ = the sample maximum 3
    p /= p.sum()
    out = rel.sets.values[:, 0, :, 0].ravel()
    observed = np.array([(out == a).sum() for a in (0.0, 1.0, 3.0)])
    assert stats.chisquare(observed, p * out.size).pvalue > 1e-3
    assert rel.epsilon == pytest.approx(0.5 * n) and rel.privacy == 0.5
    assert rel.ledger.entries[0].epsilon == pytest.approx(0.5 * n)
    del rng


@pytest.mark.parametrize("name, params, match", [
    ("lrm", {"sensitivity": "huge"}, "sensitivity: 'huge' is not allowed (allowed: range, max, "
                                     "symmetric, a number > 0)"),
    ("lrm", {"sensitivity": -1}, "sensitivity: -1 is not allowed"),
    ("lrm", {"round_to": [1, 2]}, "round_to: give a mapping"),
    ("opm", {"variant": "l1"}, "variant: 'l1' is not allowed (allowed: l2_vector, l2_scalar, "
                               "mean_linf)"),
    ("opm", {"bound": "moment"}, "bound: 'moment' needs a finite moment_k"),
    ("opm", {"bound": "range"}, "bound: 'range' is not allowed (allowed: max_abs, moment"),
    ("exm", {"quality": "rank"}, "quality: 'rank' is not allowed (allowed: count, proportion)"),
    ("exm", {"support": "all"}, "support: 'all' is not allowed"),
])
def test_bad_settings_are_one_line_config_errors(name, params, match):
    with pytest.raises(ConfigError) as info:
        make_synthesizer(name, **params)
    assert str(info.value).startswith(match) and "\n" not in str(info.value)


def test_bad_data_are_config_errors():
    z = np.zeros((1, 10, 2))
    with pytest.raises(ConfigError, match="response: column 5 of 2 columns"):
        release("lrm", z, response=5)
    with pytest.raises(ConfigError, match="data: exm releases one column, got 2"):
        release("exm", z)
