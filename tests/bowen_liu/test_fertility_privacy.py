"""Empirical privacy audit of the case-study LAP release (harness/privacy/audit.py) on a small
sub-table, configured exactly as the study's roster entry (m = 1, all cells, largest remainder).

Neighbours: one record changed (n = 10 is public and released, as a set of n records requires),
so one unit moves between two cells and the l1 sensitivity of the table is 2. The audited output
is the vector of released cell counts (every coordinate and their sum are tried).

* Δ = 2: passes.
* Δ = 1, the paper's value (right for add/remove neighbours, README "Finding, table
  sensitivity"): the realised loss on substitution neighbours exceeds ε, so the audit fails;
  the case study is ε-DP only for neighbours that add or remove a record, and 2ε-DP otherwise.
* Δ = 0.5, a deliberately wrong calibration: fails by a wide margin.
"""

import numpy as np
import pytest

from harness import config
from harness.data import CountBatch
from harness.privacy import audit_mechanism
from harness.synthesizers import make_synthesizer

X = (4, 3, 2, 1)
X_PRIME = (3, 4, 2, 1)  # one record moved from cell 1 to cell 2
N = sum(X)
EPSILON = 1.0
N_SAMPLES = 200_000


def _lap(sensitivity):
    cfg = config.load(["study=bowen_liu_fertility", "profile=ci"])
    params = dict(cfg["study"]["roster"]["LAP"])
    params.pop("noise_scope")
    name = params.pop("synthesizer")
    params["sensitivity"] = sensitivity
    return make_synthesizer(name, **params)


def _audit(sensitivity, seed):
    synth = _lap(sensitivity)

    def sample(counts, rng, size):
        data = CountBatch(np.tile(np.asarray([counts]), (size, 1)), N, levels=(0, 1, 2, 3))
        rel = synth.release(data, EPSILON, rng)
        assert rel.ledger.total_epsilon() == pytest.approx(EPSILON)
        return rel.sets.counts[:, 0, :]

    res = audit_mechanism(sample, X, X_PRIME, claimed_epsilon=EPSILON, n_samples=N_SAMPLES,
                          rng=np.random.default_rng(seed))
    print(f"\nLAP sub-table, Δ = {sensitivity:g}, ε = {EPSILON:g}: {res.summary()}")
    return res


def test_lap_with_substitution_sensitivity_passes():
    res = _audit(2.0, seed=201)
    assert res.passed, res.summary()
    assert res.epsilon_lower_bound > 0.3 * EPSILON  # the audit has power on this pair


def test_lap_with_the_papers_sensitivity_fails_for_substitution_neighbours():
    res = _audit(1.0, seed=202)
    assert not res.passed, res.summary()
    assert res.epsilon_lower_bound <= 2 * EPSILON + 1e-12  # valid bound on the true loss ≤ 2ε


def test_lap_with_a_deliberately_halved_sensitivity_fails():
    res = _audit(0.5, seed=203)
    assert not res.passed, res.summary()
    assert res.epsilon_lower_bound > 1.5 * EPSILON, res.summary()
