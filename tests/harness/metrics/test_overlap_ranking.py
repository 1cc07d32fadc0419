"""CI overlap (Karr et al. 2006) and rank tables (harness.metrics.overlap, .ranking): the spec's
hand cases, the pooled synthetic interval from the combining rule's test vector, and a block of
a printed rank table recomputed from its values."""

import numpy as np
import pandas as pd
import pytest

from harness.errors import ConfigError
from harness.metrics.overlap import ci_overlap, pooled_ci_overlap, wald_interval
from harness.metrics.ranking import rank_table


def test_karr_overlap_hand_cases():
    assert ci_overlap(0, 2, 0, 2) == 1.0  # identical
    assert ci_overlap(0, 2, 1, 3) == pytest.approx(0.5)  # ½(1/2 + 1/2)
    assert ci_overlap(0, 4, 1, 2) == pytest.approx(0.625)  # ½(1/4 + 1/1): containment > ½
    assert ci_overlap(0, 1, 2, 3) == 0.0  # disjoint: no negative values
    assert ci_overlap(0, 1, 1, 2) == 0.0  # touching
    assert ci_overlap(0, 1, np.nan, np.nan) == 0.0  # not estimable in the synthetic data
    vec = ci_overlap([0, 0], [2, 4], [1, 1], [3, 2])
    np.testing.assert_allclose(vec, [0.5, 0.625])


def test_pooled_overlap_uses_the_partial_rule():
    # spec 003 §5.1 test vector: estimates (1.0, 1.2, 0.9, 1.1), SEs (.10, .12, .11, .10)
    # pool to the CI [.7966, 1.3034]; the original interval is 1.05 ± 1.96·0.1
    est = np.array([1.0, 1.2, 0.9, 1.1])[:, None]
    var = (np.array([0.10, 0.12, 0.11, 0.10]) ** 2)[:, None]
    lo_o, hi_o = wald_interval(1.05, 0.1)
    j = pooled_ci_overlap([1.05], [0.1], est, var)
    # both intervals centred at 1.05, the synthetic one (half-width .2534) wider: J = ½(1 + w_o/w_s)
    expected = 0.5 * (1 + (hi_o - lo_o) / (1.3034 - 0.7966))
    print(f"J {j[0]:.5f}, by hand {expected:.5f}")
    assert j[0] == pytest.approx(expected, abs=2e-4)
    # a set that could not estimate the coefficient: J = 0, or pooled over the others
    est2 = np.c_[est, est]
    est2[0, 1] = np.nan
    both = pooled_ci_overlap([1.05, 1.05], [0.1, 0.1], est2, np.c_[var, var])
    assert both[0] == pytest.approx(j[0]) and both[1] == 0.0
    dropped = pooled_ci_overlap([1.05, 1.05], [0.1, 0.1], est2, np.c_[var, var],
                                missing="drop_sets")
    assert 0 < dropped[1] < 1 and dropped[1] != both[0]
    with pytest.raises(ConfigError, match="missing"):
        pooled_ci_overlap([1.0], [0.1], est, var, missing="nan")


def test_rank_table_recomputes_a_printed_block():
    # spec 003 §7.3, Table 3, log ε = −1 (no typos in this block): values and printed scores
    methods = ["laplace", "privbayes", "uh2", "uh3", "steps2", "steps3"]
    values = {
        "ks": [.978, .422, .971, .954, .971, .954],
        "cr1": [.181, .152, .162, .162, .162, .162],
        "cr5": [.210, .143, .152, .152, .171, .171],
        "cr10": [.210, .105, .114, .114, .133, .133],
        "ci_all": [.102, .050, .098, .092, .090, .091],
        "prereg": [.871, .681, .865, .839, .874, .874],
        "reg": [.638, .000, .602, .445, .667, .666],
        "pxr": [.871, .681, .865, .839, .874, .874],
    }
    table = pd.DataFrame({"method": methods, "log_eps": -1, **values})
    directions = {"ks": "min", **{k: "max" for k in values if k != "ks"}}
    ranked = rank_table(table, directions, by=["log_eps"], decimals=3)
    assert ranked["ks_rank"].tolist() == [6, 1, 4, 2, 4, 2]  # ties share the minimum rank
    assert ranked["cr5_rank"].tolist() == [1, 6, 4, 4, 2, 2]
    assert ranked["overall"].tolist() == [19, 43, 28, 30, 18, 16]  # the printed scores


def test_rank_table_groups_and_bad_directions():
    t = pd.DataFrame({"b": [0, 0, 1, 1], "m": ["a", "b", "a", "b"], "v": [1.0, 2.0, 5.0, 3.0]})
    r = rank_table(t, {"v": "max"}, by=["b"])
    assert r["v_rank"].tolist() == [2, 1, 1, 2] and r["overall"].tolist() == [2, 1, 1, 2]
    with pytest.raises(ConfigError, match="directions.v"):
        rank_table(t, {"v": "up"})
    with pytest.raises(ConfigError, match="directions"):
        rank_table(t, {"w": "max"})


def test_logistic_overlap_of_copies_is_one_and_tracks_shifts():
    from harness.metrics.overlap import logistic_ci_overlap

    rng = np.random.default_rng(4)
    n = 400
    x = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.integers(0, 3, n) == 1])
    y = (rng.random(n) < 1 / (1 + np.exp(-(x @ [-0.3, 0.8, -0.5])))).astype(float)
    same = logistic_ci_overlap(x, y, [x, x, x], [y, y, y])
    # identical sets: B = 0, T = W = SE², ν = ∞, so the pooled CI is the Wald CI: J = 1
    np.testing.assert_allclose(same.j, 1.0, atol=1e-12)
    assert same.converged.all() and not same.fitted_0_or_1.any()
    flipped = 1.0 - y  # every coefficient changes sign: the intervals separate
    other = logistic_ci_overlap(x, y, [x, x], [flipped, flipped])
    assert other.j[1] == 0.0 and other.set_coef.shape == (2, 3)
