"""Empirical ε-audit of DIP and its competitors on neighbouring data sets (spec 004 §1–§2; the
issue's "audit it empirically on neighbouring data sets, with neighbours in the privatized part;
audit the competitors the same way"), as a table of the report.

Each case releases a one-record data set x and its neighbour x′ (substitution of that record)
many times with a mechanism as the studies configure it, and :func:`harness.privacy.audit_mechanism`
bounds from below, at 95 %, the privacy loss realised between the two output distributions
(every coordinate of the release and their sum are searched for a revealing event). DIP's
reference (the hold-out, or a public or known distribution) is the same on both sides: its
guarantee is given the hold-out, and a neighbour in the hold-out is not what it covers (the
hold-out records are never released, but every released row lies in one hold-out row's cube,
spec §1.6). DIP and the record-noise competitors are per-record (local) mechanisms, so a
one-record data set realises the largest loss any data set can; the records x, x′ are chosen to
realise it (the two ends of the range on the uniform scale, of the public range, of the ball).

``covered`` says what the ε claim covers. A verdict FAIL is a proof (at 95 %) that the release
is not ε-DP on that pair: EXM with the observed support (the paper's) fails, as its ledger
says; a PASS says only that no violation was found on this pair with these samples."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from harness.data import RecordBatch
from harness.paper import Table
from harness.privacy import audit_mechanism
from harness.synthesizers import make_synthesizer

from ..exm import SweptEXM
from ..tables import tidy

EPSILON = 1.0
N_SAMPLES = 60_000
SEED = 20200501
#: a public reference of 40 records (the audit's hold-out): the same on both sides of each pair
_rng = np.random.default_rng(7)
HOLDOUT_1D = _rng.normal(size=(40, 1))
HOLDOUT_2D = np.c_[_rng.normal(size=40), _rng.normal(size=40)]
HOLDOUT_POISSON = _rng.poisson(3, size=(40, 1)).astype(float)
#: a mixed column: atoms at 0 and 2 (masses 0.3, 0.2) and an Exp(1) part (spec §1.4's example)
HOLDOUT_MIXED = np.where(_rng.random(40) < 0.3, 0.0,
                         np.where(_rng.random(40) < 0.4, 2.0, _rng.exponential(size=40)))[:, None]


def _synth(name, params):
    if name == "exm_swept":
        return SweptEXM(**params)
    return make_synthesizer(name, **params)


def sampler(name: str, params: dict, epsilon: float, parts: dict | None = None):
    """``sample(record, rng, size)``: ``size`` independent releases of the one-record data set
    ``record`` (a list of rows), as a (size, d) array of the released values (a released model:
    its coefficients)."""
    synth = _synth(name, params)

    def sample(record, rng, size):
        data = RecordBatch(np.tile(np.asarray(record, dtype=float), (size, 1, 1)))
        given = None if parts is None else {k: RecordBatch(np.tile(v, (size, 1, 1)))
                                            for k, v in parts.items()}
        rel = synth.release(data, epsilon, rng, **({"parts": given} if given else {}))
        if rel.kind == "model":
            return rel.sets.coefficients[:, 0, :]
        return rel.sets.values[:, 0].reshape(size, -1)

    return sample


#: label -> (synthesizer, parameters, x, x′, parts, what the claim covers)
CASES = {
    "DIP, known F = N(0, 1)": (
        "dip", {"reference": "known", "distribution": stats.norm()}, [[-4.0]], [[4.0]], None,
        "every record (F public)"),
    "DIP, hold-out reference, continuous": (
        "dip", {"reference": "public"}, [[-9.0]], [[9.0]], {"holdout": HOLDOUT_1D},
        "the privatized records, given the hold-out"),
    "DIP, hold-out reference, discrete (Poisson lattice)": (
        "dip", {"reference": "public", "columns": {"kind": "discrete", "start": 0}},
        [[0.0]], [[12.0]], {"holdout": HOLDOUT_POISSON},
        "the privatized records, given the hold-out"),
    "DIP, hold-out reference, mixed (atoms 0, 2)": (
        "dip", {"reference": "public", "columns": {"kind": "mixed", "jumps": [0.0, 2.0]}},
        [[0.0]], [[9.0]], {"holdout": HOLDOUT_MIXED},
        "the privatized records, given the hold-out"),
    "DIP, hold-out cube, 2 columns (ε/2 each)": (
        "dip", {"reference": "public"}, [[-9.0, -9.0]], [[9.0, 9.0]],
        {"holdout": HOLDOUT_2D}, "the privatized records, given the hold-out"),
    "LRM, Δ = 1 (public range [0, 1])": (
        "lrm", {"sensitivity": 1.0}, [[0.0]], [[1.0]], None, "every record"),
    "NLRM, 2 columns, Δ = 1 each (ε/2 each)": (
        "lrm", {"sensitivity": 1.0}, [[0.0, 0.0]], [[1.0, 1.0]], None, "every record"),
    "OPM mean (§3.2.1), T = 1": (
        "opm", {"variant": "mean_linf", "bound": 1.0}, [[-1.0]], [[1.0]], None,
        "every record"),
    "OPM ℓ2 ball (§4.2.3), r = 1": (
        "opm", {"variant": "l2_vector", "bound": 1.0}, [[-1.0]], [[1.0]], None, "every record"),
    "OPM private logistic GLM (§5.2.1), r = 2": (
        "opm_glm", {"response": 1, "bound": 2.0}, [[1.0, 0.0]], [[1.0, 1.0]], None,
        "the response given the covariates (fixed design)"),
    "EXM, public support {0, 1, 2}, Δ = 1": (
        "exm", {"support": [0, 1, 2], "sensitivity": 1.0}, [[0.0]], [[2.0]], None,
        "every record (per draw)"),
    "EXM, observed support (the paper's)": (
        "exm_swept", {"sensitivity": 1.0}, [[0.0]], [[2.0]], None,
        "not covered: the candidates are read from the data"),
}


def audit_case(label: str, n_samples: int = N_SAMPLES, epsilon: float = EPSILON,
               seed: int = SEED):
    """The :class:`harness.privacy.AuditResult` of case ``label`` and the ε its ledger claims."""
    name, params, x, x_prime, parts, _ = CASES[label]
    result = audit_mechanism(sampler(name, params, epsilon, parts), x, x_prime,
                             claimed_epsilon=epsilon, n_samples=n_samples,
                             rng=np.random.default_rng(seed))
    given = None if parts is None else {k: RecordBatch(v[None]) for k, v in parts.items()}
    rel = _synth(name, params).release(RecordBatch(np.asarray(x, float)[None]), epsilon,
                                       np.random.default_rng(0),
                                       **({"parts": given} if given else {}))
    return result, rel.ledger.total_epsilon()


def audit_table(n_samples: int = N_SAMPLES) -> pd.DataFrame:
    """One row per case: the neighbours, the ε the ledger claims, the audit's 95 % lower bound
    on the realised loss and its point estimate, and the verdict."""
    rows = []
    for label, (_, _, x, x_prime, _, covered) in CASES.items():
        res, ledger = audit_case(label, n_samples)
        rows.append({"mechanism": label, "x": str(x[0]), "x_prime": str(x_prime[0]),
                     "ledger_epsilon": ledger, "epsilon_lower_bound": res.epsilon_lower_bound,
                     "epsilon_point": res.epsilon_point, "verdict": "PASS" if res.passed
                     else "FAIL", "covers": covered})
    return pd.DataFrame(rows)


TABLES = {"privacy_audit": Table(lambda: tidy(audit_table(), 3), reads=())}
