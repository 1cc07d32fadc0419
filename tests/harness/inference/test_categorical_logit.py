"""The one-hot block coordinate descent for elastic-net multinomial logits
(harness.inference.categorical_logit): optimality (KKT) checked by a record-level loop, the
same optimum as scikit-learn's saga on the one-hot matrix, batches bit-identical to solo
fits, absent classes and levels, and unconverged λ values."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from float_compare import assert_close_ulps

from harness.inference.categorical_logit import LogitProblem, fit_logit_paths, softmax_rows
from harness.synthesizers.pmi import _sklearn_version

CARDS = (3, 4, 2)
K = 3


def problem(n, seed, lambdas=(0.05, 0.01, 0.002), drop_class=None):
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(c, size=n) for c in CARDS])
    logits = np.array([[0.0, 1.0, -1.0], [0.5, -0.5, 0.0], [1.5, 0.0, -1.5], [0, 0, 0]])
    eta = logits[codes[:, 1]] + 0.8 * codes[:, [0]] * np.array([1.0, -1.0, 0.0])
    p = np.exp(eta) / np.exp(eta).sum(1, keepdims=True)
    y = np.array([rng.choice(K, p=row) for row in p])
    if drop_class is not None:
        y[y == drop_class] = (drop_class + 1) % K
    return LogitProblem(codes, y, np.array(lambdas))


def loop_gradient(prob, coef, intercept):
    """Gradient of the mean negative log-likelihood, one record at a time (the oracle)."""
    offsets = np.concatenate([[0], np.cumsum(CARDS)])
    g_coef = np.zeros_like(coef)
    g_int = np.zeros_like(intercept)
    n = prob.y.size
    for i in range(n):
        cols = [offsets[f] + prob.codes[i, f] for f in range(len(CARDS))]
        eta = [intercept[k] + sum(coef[c, k] for c in cols) for k in range(K)]
        top = max(e for e in eta if e != -math.inf)
        z = [math.exp(e - top) for e in eta]
        for k in range(K):
            resid = z[k] / sum(z) - (prob.y[i] == k)
            g_int[k] += resid / n
            for c in cols:
                g_coef[c, k] += resid / n
    return g_coef, g_int


@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
def test_solutions_satisfy_the_kkt_conditions(l1_ratio):
    prob = problem(300, 1)
    path = fit_logit_paths([prob], CARDS, K, l1_ratio=l1_ratio, thresh=1e-13)[0]
    assert path.converged.all()
    for coef, intercept, lam in zip(path.coef, path.intercept, prob.lambdas, strict=True):
        g, g0 = loop_gradient(prob, coef, intercept)
        assert np.abs(g0).max() < 1e-6  # unpenalised intercept
        ridge = lam * (1 - l1_ratio) * coef
        nonzero = coef != 0
        assert np.abs((g + ridge + lam * l1_ratio * np.sign(coef))[nonzero]).max() < 1e-5
        assert np.all(np.abs(g[~nonzero]) <= lam * l1_ratio + 1e-5)
        assert nonzero.any() and (~nonzero).any()


def objective(prob, coef, intercept, lam):
    offsets = np.concatenate([[0], np.cumsum(CARDS)])[:-1]
    eta = intercept + sum(coef[offsets[f] + prob.codes[:, f]] for f in range(len(CARDS)))
    eta = eta - eta.max(1, keepdims=True)
    loglik = eta[np.arange(prob.y.size), prob.y] - np.log(np.exp(eta).sum(1))
    return -loglik.mean() + lam * np.abs(coef).sum()


def test_the_same_optimum_as_sklearn_saga():
    """saga on the full one-hot matrix with C = 1/(n·λ) minimises the same lasso objective:
    the objectives agree within 1e-7 and the fitted probabilities within 1e-3."""
    sklearn = pytest.importorskip("sklearn.linear_model")
    prob = problem(400, 2, lambdas=(0.02, 0.004))
    path = fit_logit_paths([prob], CARDS, K, thresh=1e-13)[0]
    x = np.concatenate([np.eye(c)[prob.codes[:, f]] for f, c in enumerate(CARDS)], axis=1)
    for coef, intercept, lam in zip(path.coef, path.intercept, prob.lambdas, strict=True):
        kw = {"l1_ratio": 1.0, "solver": "saga", "max_iter": 100_000, "tol": 1e-10}
        if _sklearn_version() < (1, 8):
            kw["penalty"] = "elasticnet"
        model = sklearn.LogisticRegression(C=1 / (prob.y.size * lam), **kw)
        model.fit(x, prob.y)
        ours = objective(prob, coef, intercept, lam)
        theirs = objective(prob, model.coef_.T, model.intercept_, lam)
        assert abs(ours - theirs) < 1e-7
        eta = x @ coef + intercept
        p = np.exp(eta) / np.exp(eta).sum(1, keepdims=True)
        assert np.abs(p - model.predict_proba(x)).max() < 1e-3


def test_a_batch_solves_each_problem_exactly_as_alone():
    probs = [problem(250, 3), problem(310, 4, lambdas=(0.08, 0.02, 0.005, 0.001)),
             problem(200, 5, lambdas=(0.03,))]
    together = fit_logit_paths(probs, CARDS, K)
    for prob, joint in zip(probs, together, strict=True):
        alone = fit_logit_paths([prob], CARDS, K)[0]
        # a batch and a problem alone are two paths (array shapes pick the BLAS and SIMD
        # kernels, per CPU): the same floats to rounding, which the solver's iterations
        # amplify to ~10 ulps of the largest entry for a 1-ulp change of the input; a batch
        # that mixed its problems would be off by the stopping tolerance or more
        assert_close_ulps(joint.coef, alone.coef, ulps=64, scale=np.abs(alone.coef).max())
        assert_close_ulps(joint.intercept, alone.intercept, ulps=64,
                          scale=np.abs(alone.intercept).max())
        assert np.array_equal(alone.sweeps, joint.sweeps)


def test_absent_classes_and_levels():
    prob = problem(300, 6, drop_class=2)
    codes = prob.codes.copy()
    codes[codes[:, 1] == 3, 1] = 2  # level 3 of the second predictor never occurs
    prob = LogitProblem(codes, prob.y, prob.lambdas)
    path = fit_logit_paths([prob], CARDS, K)[0]
    assert np.all(path.intercept[:, 2] == -np.inf)
    assert np.all(path.coef[:, :, 2] == 0) and np.all(path.coef[:, CARDS[0] + 3] == 0)
    assert np.isfinite(path.intercept[:, :2]).all()


def test_a_lambda_that_does_not_converge_ends_the_path():
    prob = problem(300, 7)
    path = fit_logit_paths([prob], CARDS, K, thresh=1e-13, max_sweeps=3)[0]
    first_bad = int(np.argmin(path.converged))
    assert not path.converged[first_bad:].any() and path.converged[:first_bad].all()
    assert np.isnan(path.coef[first_bad:]).all() and path.sweeps[first_bad] == 3


def test_masked_median_is_nanmedian():
    from harness.inference.categorical_logit import masked_median

    rng = np.random.default_rng(8)
    values = rng.normal(size=(40, 7, 5))
    mask = rng.random((40, 7, 5)) < 0.6
    for axis in (1, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices
            expected = np.nan_to_num(np.nanmedian(np.where(mask, values, np.nan), axis=axis))
        assert np.array_equal(masked_median(values, mask, axis), expected)


@pytest.mark.parametrize("classes", range(1, 11))
def test_softmax_rows_has_the_bits_of_numpys_row_reductions(classes):
    """The column-by-column maxima and sums of short rows give exactly what numpy's
    reductions along the row give (PMI's fits, hence the Park & Ghosh sweeps, are
    bit-identical to the former code), also for rows holding −inf logits (absent classes)."""
    rng = np.random.default_rng(classes)
    eta = rng.normal(scale=6.0, size=(2_000, classes))
    eta[rng.random(eta.shape) < 0.2] = -np.inf
    eta[:, 0] = np.where(np.isinf(eta).all(axis=1), 0.0, eta[:, 0])  # every row has a class
    expected = np.exp(eta - eta.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    got = softmax_rows(eta)
    assert np.array_equal(got, expected)
    assert np.all(got[np.isinf(eta)] == 0.0)
