"""The private logistic GLM (Duchi, Jordan & Wainwright 2018 §5.2.1; spec 004 §2 OPM 3): the
score-equation solver equals the logistic MLE on noiseless sums, reports no convergence when the
sum is not attainable, and the release is unbiased in its score sum and spends ε once."""

import numpy as np
import pytest

from harness.data import RecordBatch
from harness.errors import ConfigError
from harness.inference.regression import with_intercept
from harness.synthesizers import make_synthesizer
from harness.synthesizers.private_glm import logistic_score_solve


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + x @ [1.0, -0.5])))).astype(float)
    return x, y


def test_noiseless_score_solve_is_the_logistic_mle():
    x, y = _data()
    design = with_intercept(x)
    theta, ok = logistic_score_solve(design[None], (y[:, None] * design).sum(0)[None])
    # the MLE's score vanishes: Σ (y − σ(xθ)) x = 0
    p = 1 / (1 + np.exp(-design @ theta[0]))
    assert ok[0] and np.abs(((y - p)[:, None] * design).sum(0)).max() < 1e-6
    assert theta[0] == pytest.approx([0.3, 1.0, -0.5], abs=0.35)


def test_an_unattainable_score_sum_does_not_converge():
    x, y = _data()
    design = with_intercept(x)
    target = (y[:, None] * design).sum(0)
    target[0] = -3.0  # a negative count of ones: no θ attains it
    theta, ok = logistic_score_solve(design[None], target[None])
    assert not ok[0] and theta[0, 0] < -5


def test_release_is_a_model_whose_noisy_score_sum_is_unbiased(monkeypatch):
    import harness.synthesizers.private_glm as glm

    x, y = _data(n=50)
    z = np.c_[x, y]
    sums = []
    real = glm.logistic_score_solve

    def spy(design, target, **kw):
        sums.append(target)
        return real(design, target, **kw)

    monkeypatch.setattr(glm, "logistic_score_solve", spy)
    synth = make_synthesizer("opm_glm", response=2, bound=10.0)
    rel = synth.release(RecordBatch(np.tile(z, (400, 1, 1))), 2.0, np.random.default_rng(1))
    assert rel.kind == "model" and rel.sets.coefficients.shape == (400, 1, 3)
    assert rel.ledger.total_epsilon() == 2.0 and len(rel.ledger.entries) == 1
    got = sums[0].mean(axis=0)
    want = (y[:, None] * with_intercept(x)).sum(0)
    se = sums[0].std(axis=0) / np.sqrt(400)
    assert np.all(np.abs(got - want) < 4 * se), (got, want, se)


@pytest.mark.parametrize("params, word", [({"bound": "huge"}, "bound"),
                                          ({"bound": 0.5}, "bound"),
                                          ({"response": 7}, "response")])
def test_bad_settings_are_one_line(params, word):
    x, y = _data(n=20)
    with pytest.raises(ConfigError, match=word):
        make_synthesizer("opm_glm", **{"response": 2, **params}).release(
            RecordBatch(np.c_[x, y][None]), 1.0, np.random.default_rng(0))


def test_a_shared_design_is_solved_as_each_replicates_own(monkeypatch):
    """One fixed design (n, d) for every data set (its distinct rows with counts, one product
    per step) gives the per-design solve's answer up to rounding: converged fits agree to
    ~1e-9, unattainable sums fail in both; with or without the rows' outer products."""
    import harness.synthesizers.private_glm as glm

    rng = np.random.default_rng(2)
    x = np.c_[rng.integers(0, 4, 400), rng.integers(0, 2, 400)].astype(float)
    design = with_intercept(x)
    y = (rng.random((3, 400)) < 0.3).astype(float)
    target = np.einsum("bn,nd->bd", y, design)
    target[2, 0] = -3.0  # no solution
    shared, ok_shared = logistic_score_solve(design, target)
    own, ok_own = logistic_score_solve(np.broadcast_to(design, (3, *design.shape)), target)
    np.testing.assert_array_equal(ok_shared, [True, True, False])
    np.testing.assert_array_equal(ok_own, ok_shared)
    np.testing.assert_allclose(shared[:2], own[:2], rtol=1e-9, atol=1e-9)
    # a large shared design (no room for its rows' outer products): the same answer
    monkeypatch.setattr(glm, "OUTER_PRODUCTS_LIMIT", 10)
    large, ok_large = logistic_score_solve(design, target)
    np.testing.assert_array_equal(ok_large, ok_shared)
    np.testing.assert_allclose(large[:2], shared[:2], rtol=1e-9, atol=1e-9)
