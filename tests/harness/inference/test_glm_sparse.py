"""The ``sparse`` solver of harness.inference.glm_logit (normal equations of a sparse design,
harness.inference.glm_gram) gives the ``qr`` solver's fit: same aliasing, rank, iterations,
convergence flag and fitted probabilities, on the SPECKS propensity model of the CPS schema
(15 attributes, 502 columns) at a small n, and in the corners where the Gram cannot decide."""

import sys

import numpy as np
import pytest

from experiments.steps.cps import LEVELS, standin_cps
from harness.inference.categorical_gram import CategoricalGram
from harness.inference.design import distinct_rows, dummy_design, sparse_dummy_design
from harness.inference.glm_gram import RowPairGram, SparseDesign
from harness.inference.glm_logit import GlmControl, glm_logit
from harness.metrics.propensity import ks_two_groups

N_LEVELS = [len(v) for v in LEVELS.values()]
GLM = sys.modules["harness.inference.glm_logit"]


def _stacked_cells(original, synthetic):
    stacked = np.concatenate([original, synthetic])
    cells, index, counts = distinct_rows(stacked, N_LEVELS)
    n_syn = np.bincount(index, weights=np.r_[np.zeros(len(original)), np.ones(len(synthetic))])
    return cells, n_syn, counts.astype(float)


def _counting_qr_steps(monkeypatch):
    calls = []
    qr_step = GLM._wls_step
    monkeypatch.setattr(GLM, "_wls_step", lambda *a: calls.append(1) or qr_step(*a))
    return calls


def _cps_pair(kind, n=2000, seed=3):
    rng = np.random.default_rng(seed)
    original = standin_cps(n, rng)
    if kind == "fresh":  # a good synthesizer: same population; voted ⇒ registered in both
        return original, standin_cps(n, rng)
    synthetic = original.copy()  # 5% of the entries redrawn: impossible cells, separation
    redraw = rng.random(synthetic.shape) < 0.05
    uniform = np.stack([rng.integers(0, k, n) for k in N_LEVELS], axis=1)
    synthetic[redraw] = uniform[redraw]
    return original, synthetic


@pytest.mark.parametrize("kind", ["fresh", "perturbed"])
def test_sparse_solver_is_the_qr_fit_on_the_cps_propensity_model(kind, monkeypatch):
    cells, n_syn, counts = _stacked_cells(*_cps_pair(kind))
    dense, _ = dummy_design(cells, N_LEVELS)
    assert dense.shape[1] == 502
    qr = glm_logit(dense, n_syn / counts, counts)
    qr_steps = _counting_qr_steps(monkeypatch)
    design = SparseDesign(sparse_dummy_design(cells, N_LEVELS), CategoricalGram(cells, N_LEVELS))
    fast = glm_logit(design, n_syn / counts, counts, control=GlmControl(solver="sparse"))
    gap = np.abs(fast.fitted - qr.fitted).max()
    ks = [ks_two_groups(f.fitted, counts - n_syn, n_syn) for f in (fast, qr)]
    print(f"{kind}: rows {len(cells)}, rank {fast.rank}/{qr.rank}, iterations "
          f"{fast.iterations}/{qr.iterations}, max |Δ fitted| {gap:.2e}, KS {ks[0]!r} / {ks[1]!r}"
          f", QR steps taken by the sparse solver {len(qr_steps)}")
    assert gap <= 1e-8 and ks[0] == ks[1]
    assert fast.rank == qr.rank and np.array_equal(fast.aliased, qr.aliased)
    assert fast.iterations == qr.iterations and fast.converged == qr.converged
    assert fast.fitted_0_or_1 == qr.fitted_0_or_1
    assert fast.deviance == pytest.approx(qr.deviance, rel=1e-10)
    kept = ~qr.aliased
    np.testing.assert_allclose(fast.coef[kept], qr.coef[kept], rtol=1e-6, atol=1e-6)
    if kind == "fresh":
        # the empty cell voted = 1, registered = 0 aliases a column of non-zero norm (decided
        # on the rows, not the Gram), and every step stays on the normal equations
        assert qr.aliased.sum() >= 1 and not qr_steps
    else:  # records in cells the original lacks (voted, not registered) separate
        assert qr.fitted.max() > 1 - 1e-6 and qr.iterations > 10


@pytest.mark.parametrize("noise, by_qr", [(1e-6, True), (3e-5, False)])
def test_a_nearly_dependent_kept_column(noise, by_qr, monkeypatch):
    # column 3 = column 1 + noise·N(0, 1): the QR keeps it (row-residual ratio ≈ noise > tol
    # 1e-7) and the Gram's pivot (≈ noise² of its norm²) is below the floor 1e-8. At 1e-6 the
    # normal equations cannot solve it and every step is the QR's; at 3e-5 (above
    # REFINED_FLOOR's 1e-5) the steps stay on the normal equations with iterative refinement
    rng = np.random.default_rng(2)
    n = 400
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.normal(size=n)])
    x = np.column_stack([x, x[:, 1] + noise * rng.normal(size=n), np.zeros(n)])
    y = (rng.random(n) < 0.4).astype(float)
    qr = glm_logit(x, y)
    qr_steps = _counting_qr_steps(monkeypatch)
    fast = glm_logit(x, y, control=GlmControl(solver="sparse"))
    assert qr.aliased.tolist() == [False, False, False, False, True]
    assert fast.aliased.tolist() == qr.aliased.tolist() and fast.iterations == qr.iterations
    assert len(qr_steps) == (fast.iterations if by_qr else 0)
    np.testing.assert_allclose(fast.fitted, qr.fitted, atol=1e-12)
    np.testing.assert_allclose(fast.coef[:4], qr.coef[:4], rtol=1e-8)
    np.testing.assert_allclose(fast.bse[:4], qr.bse[:4], rtol=1e-6)


def test_sparse_design_has_the_dense_design_columns():
    rng = np.random.default_rng(0)
    levels = [2, 3, 5, 2, 4]
    codes = np.stack([rng.integers(0, k, 200) for k in levels], axis=1)
    for interactions in (True, False, [(0, 2), (1, 4)]):
        dense, _ = dummy_design(codes, levels, interactions=interactions)
        np.testing.assert_array_equal(
            sparse_dummy_design(codes, levels, interactions=interactions).toarray(), dense)
    with pytest.raises(ValueError, match="interaction"):
        sparse_dummy_design(codes, levels, interactions=[(2, 1)])


def test_distinct_rows_are_numpys_unique_rows():
    rng = np.random.default_rng(1)
    levels = [2, 3, 5, 2, 4]
    codes = np.stack([rng.integers(0, k, 300) for k in levels], axis=1)
    cells, index, counts = distinct_rows(codes, levels)
    ref = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(cells, ref[0])
    np.testing.assert_array_equal(index, ref[1].reshape(-1))
    np.testing.assert_array_equal(counts, ref[2])
    np.testing.assert_array_equal(cells[index], codes)


@pytest.mark.parametrize("interactions", [True, False])
def test_categorical_gram_is_the_weighted_gram_for_any_group_set(interactions):
    rng = np.random.default_rng(4)
    levels = [2, 3, 5, 2, 4]
    codes = np.unique(np.stack([rng.integers(0, k, 300) for k in levels], axis=1), axis=0)
    w2 = rng.random(len(codes))
    x, _ = dummy_design(codes, levels, interactions=interactions)
    ref = (x * w2[:, None]).T @ x
    for group in (None, (), (2,), (1, 2, 4), (0, 1, 2, 3, 4)):
        gram = CategoricalGram(codes, levels, interactions=interactions, group=group)
        np.testing.assert_allclose(gram(w2), ref, rtol=1e-13, atol=1e-13)


def test_row_pair_gram_is_scipys_sparse_gram_bit_for_bit():
    # dummies, a numeric column in every row (as the DID model's age), two numeric columns in
    # some rows (their lower entries are summed apart), a column of 1s and other values, and
    # an empty row
    from scipy import sparse

    rng = np.random.default_rng(8)
    n = 400
    codes = np.stack([rng.integers(0, k, n) for k in (3, 4, 2)], axis=1)
    x, _ = dummy_design(codes, [3, 4, 2], numeric={1: [18.0, 19.0, 20.0, 21.0]})
    x = np.column_stack([x, rng.normal(size=n) * (rng.random(n) < 0.5),
                         np.where(rng.random(n) < 0.3, 1.0, rng.integers(0, 3, n) * 0.7)])
    x[7] = 0.0
    xs = sparse.csr_matrix(x)
    gram = RowPairGram(xs)
    for scale in (1e-12, 1.0, 1e6):
        w2 = rng.random(n) ** 3 * scale
        xw = xs.copy()
        xw.data *= w2[np.repeat(np.arange(n), np.diff(xs.indptr))]
        ref = (xs.T.tocsr() @ xw).toarray()
        assert gram(w2).tobytes() == ref.tobytes()
    assert SparseDesign(x).gram(w2).tobytes() == ref.tobytes()


def test_an_assumed_dependence_is_redecided_when_the_columns_before_it_change():
    # columns: intercept, a, a again (exactly dependent), b, a − b (dependent on 1, a, b)
    rng = np.random.default_rng(6)
    a, b = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    x = np.column_stack([np.ones(300), a, a, b, a + b]).astype(float)
    z, w = rng.normal(size=300), np.sqrt(rng.uniform(0.1, 0.25, 300))
    coef_qr, aliased_qr, _ = GLM._wls_step(x, z, w, 1e-11)
    design = SparseDesign(x)
    first = design.step(z, w, 1e-11, 1e-8)
    assert sorted(design.dependent) == [2, 4]  # both found on the rows, both exact
    design.dependent[4] = np.array([0, 3]).tobytes()  # a wrong record of what precedes it
    again = design.step(z, w, 1e-11, 1e-8)
    for coef, aliased, _ in (first, again):
        assert aliased.tolist() == aliased_qr.tolist() == [False, False, True, False, True]
        np.testing.assert_allclose(coef, coef_qr, atol=1e-12)
    assert design.dependent[4] == np.array([0, 1, 3]).tobytes()
