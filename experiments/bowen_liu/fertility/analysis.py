"""The data user's analysis of the Bowen & Liu (2020) case study (§5, Table 4): a linear SVM
trained on a (synthetic) training set and scored on the fixed test cases.

The paper used R's ``e1071::svm(kernel = "linear", cross = 5)``: libsvm's C-SVC with cost 1 on
standardised features (``scale = TRUE``), with an intercept; ``cross = 5`` only reports a 5-fold
CV accuracy, the classifier is the fit to all training records (spec §6 item 24). We use
scikit-learn's ``SVC(kernel="linear")`` (the same libsvm) on features standardised with the
training mean and population SD (e1071 uses the sample SD: a common factor √(n/(n − 1)) on every
feature). A training set holding one class cannot be fitted: its classifier predicts that class.

scikit-learn is an optional extra (``pip install -e ".[sklearn]"``). Fits loop over distinct
data sets (repetitions of the original data are fitted once).
"""

from __future__ import annotations

import numpy as np


def _fit_predict(x: np.ndarray, y: np.ndarray, x_new: np.ndarray, cost: float) -> np.ndarray:
    """Standardise with the training mean and SD (a constant column is left unscaled), fit a
    linear C-SVC, predict ``x_new``."""
    import sklearn
    from sklearn.svm import SVC

    classes = np.unique(y)
    if classes.size < 2:
        return np.full(x_new.shape[0], int(classes[0]) if classes.size else 0)
    mean = x.mean(axis=0)
    sd = x.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    with sklearn.config_context(assume_finite=True):
        model = SVC(kernel="linear", C=cost).fit((x - mean) / sd, y)
        return model.predict((x_new - mean) / sd).astype(np.int64)


def _cv_accuracy(x, y, cost: float, folds: int, seed: int) -> float:
    from sklearn.model_selection import KFold

    hits = 0
    for tr, te in KFold(n_splits=folds, shuffle=True, random_state=seed).split(x):
        hits += int((_fit_predict(x[tr], y[tr], x[te], cost) == y[te]).sum())
    return hits / y.size


def svm_predictions(values: np.ndarray, test_x: np.ndarray, *, cost: float, folds: int,
                    seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Test-set predictions (R, m, n_test) and 5-fold CV accuracies (R, m) of the SVMs trained
    on the released sets ``values`` (R, m, n, 10) (9 features, then the 0/1 diagnosis)."""
    r, m, n, p = values.shape
    flat = values.reshape(r * m, n * p)
    uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
    pred = np.empty((uniq.shape[0], test_x.shape[0]), dtype=np.int64)
    cv = np.empty(uniq.shape[0])
    for i, u in enumerate(uniq):
        rec = u.reshape(n, p)
        x, y = rec[:, :-1], rec[:, -1].astype(np.int64)
        pred[i] = _fit_predict(x, y, test_x, cost)
        cv[i] = _cv_accuracy(x, y, cost, folds, seed)
    inverse = inverse.reshape(-1)
    return pred[inverse].reshape(r, m, -1), cv[inverse].reshape(r, m)
