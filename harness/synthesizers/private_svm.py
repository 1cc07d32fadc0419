"""PrivateSVM (Rubinstein, Bartlett, Huang & Taft 2009, Alg. 2), the benchmark of the Bowen &
Liu (2020) case study (§5; spec 000 §4.5 and its REVIEW notes (i)–(v)).

It releases a classifier, not data: a linear SVM is fitted to the original records and its
weight vector is released with Laplace noise of l1 sensitivity Δ = 4LCκ√F/n
(``harness.privacy.private_svm_laplace``, recorded in the ledger).

* Objective (note iii): Rubinstein et al.'s bound holds for the primal
  ½‖w‖² + (C/n) Σ_i hinge(y_i, ⟨w, x_i⟩). We solve exactly this with scikit-learn's
  ``LinearSVC(loss="hinge", C=C/n)`` (liblinear minimises ½‖w‖² + C' Σ hinge, so C' = C/n), not
  e1071/libsvm's ``cost = C`` (½‖w‖² + C Σ hinge), for which the bound does not hold.
* Intercept (note v): Rubinstein et al.'s classifier is f(x) = ⟨w, x⟩, without a bias term, so
  the model is fitted without an intercept and the noisy w is the whole release (releasing an
  unperturbed intercept would not be DP).
* Features (note iv): the bound needs |x_j| ≤ 1, so the records are used in their own coding
  (the UCI coding lies in [−1, 1]); they are not standardised before the noise is added.

The label column holds 0/1 (1 = the positive class); every other column is a feature.
scikit-learn is an optional extra (``pip install -e ".[sklearn]"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..privacy import private_svm_laplace
from ..validation import check_number
from .base import Synthesizer
from .registry import register

INTERCEPT_RULES = ("none",)


def require_sklearn():
    """Import scikit-learn or fail with one line saying how to install it."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise ConfigError(
            'scikit-learn is needed by this study (install the optional extra: '
            'pip install -e ".[sklearn]")'
        ) from None


@dataclass(frozen=True)
class LinearClassifierBatch:
    """Released linear classifiers: ``weights`` (R, m, F) and ``intercept`` (R, m); the
    predicted class of x is 1 when ⟨w, x⟩ + b > 0."""

    weights: np.ndarray
    intercept: np.ndarray

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.weights.shape[:-1]

    def first_sets(self, m: int) -> LinearClassifierBatch:
        return LinearClassifierBatch(self.weights[:, :m], self.intercept[:, :m])

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Predicted 0/1 labels (R, m, n) of records ``x`` (n, F)."""
        score = np.einsum("rmf,nf->rmn", self.weights, x) + self.intercept[..., None]
        return (score > 0).astype(np.int64)


@register
class PrivateSVM(Synthesizer):
    """PrivateSVM (Rubinstein et al. 2009, Alg. 2): linear SVM weights plus Laplace noise."""

    release_kind = "model"

    name = "private_svm"
    #: takes records with a 0/1 label column (a RecordBatch) and releases classifiers, not data
    input_kind = "labelled"

    def __init__(self, m: int = 1, cost: float = 1.0, kernel_bound: float = 9.0,
                 lipschitz: float = 1.0, label_column: int = -1, intercept: str = "none",
                 max_iter: int = 100_000):
        super().__init__(m)
        self.cost = float(check_number("cost", cost, open_interval=(0, np.inf)))
        self.kernel_bound = float(check_number("kernel_bound", kernel_bound,
                                               open_interval=(0, np.inf)))
        self.lipschitz = float(check_number("lipschitz", lipschitz, open_interval=(0, np.inf)))
        self.label_column = int(label_column)
        if intercept not in INTERCEPT_RULES:
            raise allowed("intercept", intercept, INTERCEPT_RULES)
        self.intercept = intercept
        self.max_iter = int(max_iter)

    def fit_weights(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Non-private weights (F,) of the primal ½‖w‖² + (C/n) Σ hinge, no intercept
        (liblinear's coordinate order is seeded: the fit never reads global random state)."""
        require_sklearn()
        from sklearn.svm import LinearSVC

        if np.unique(y).size < 2:  # one class: the minimiser of the primal is w = 0
            return np.zeros(x.shape[1])
        svm = LinearSVC(loss="hinge", C=self.cost / x.shape[0], fit_intercept=False,
                        dual=True, max_iter=self.max_iter, random_state=0)
        svm.fit(x, y)
        return svm.coef_[0].copy()

    def _release(self, data: RecordBatch, epsilon, ledger, rng):
        values = data.values
        label = self.label_column % values.shape[-1]
        x = np.delete(values, label, axis=-1)
        y = values[..., label].astype(np.int64)
        r, n, f = x.shape
        if np.any(np.abs(x) > 1):
            raise ValueError("PrivateSVM's sensitivity bound needs features with |x_j| <= 1")
        # one fit per distinct data set (replicates of a case study share the same data)
        flat = np.concatenate([x.reshape(r, -1), y], axis=1)
        uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
        fitted = np.stack([self.fit_weights(u[: n * f].reshape(n, f), u[n * f:]) for u in uniq])
        w = fitted[inverse.reshape(-1)]
        sets = []
        for j in range(self.m):
            sets.append(private_svm_laplace(
                w, n=n, features=f, epsilon=epsilon / self.m, rng=rng, ledger=ledger,
                lipschitz=self.lipschitz, cost=self.cost, kernel_bound=self.kernel_bound,
                statistic=f"set {j + 1}: linear SVM weights",
            ))
        weights = np.stack(sets, axis=1)
        return LinearClassifierBatch(weights, np.zeros(weights.shape[:-1])), {}

    def synthesize(self, records, epsilon: float | None = None, *, seed=None, levels=None):
        """Notebook use: m noisy (weights, intercept) pairs for one data set (an array or
        DataFrame whose ``label_column`` holds 0/1 labels, or a one-replicate RecordBatch)."""
        data = records if isinstance(records, RecordBatch) else RecordBatch.from_records(records)
        rel = self.release(data, epsilon, np.random.default_rng(seed))
        return [(rel.sets.weights[0, j], float(rel.sets.intercept[0, j])) for j in range(rel.m)]
