"""The stand-in discharge generator and the CSV loader (spec 001 §2.1, §2.2 acceptance checks)."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from experiments.park_ghosh import regression
from experiments.park_ghosh.data import (
    CARDINALITIES,
    COL,
    LEVELS,
    ORDER,
    load_discharge_csv,
    schema,
    standin_discharge,
)
from harness.errors import ConfigError

N = 200_000


@pytest.fixture(scope="module")
def data():
    return standin_discharge(N, np.random.default_rng(0))


def plugin_mi(a, b, ca, cb):
    joint = np.bincount(a * cb + b, minlength=ca * cb).reshape(ca, cb) / a.size
    outer = joint.sum(1, keepdims=True) * joint.sum(0, keepdims=True)
    nz = joint > 0
    return float((joint[nz] * np.log(joint[nz] / outer[nz])).sum())


def test_schema_order_cardinalities_and_labels():
    assert ORDER == ("typ", "age.yrs", "sex", "ethncty", "race", "patzip", "los", "disp", "pay",
                     "charge", "MDC", "sev", "cat")
    assert CARDINALITIES == (6, 18, 3, 4, 7, 16, 16, 13, 9, 25, 25, 3, 2)
    assert schema().cell_shape() == CARDINALITIES
    assert "70-90" in LEVELS["los"] and "4K" in LEVELS["charge"]
    assert LEVELS["charge"][LEVELS["charge"].index("20K") - 1] == "15K"
    assert int(np.prod(CARDINALITIES, dtype=np.int64)) == 1_018_967_040_000


def test_every_level_occurs_and_codes_in_range(data):
    assert data.shape == (N, 13) and data.dtype == np.int64
    for j, c in enumerate(CARDINALITIES):
        counts = np.bincount(data[:, j], minlength=c)
        assert counts.size == c, ORDER[j]
        assert (counts > 0).all(), f"{ORDER[j]} misses a level"


def test_na_rates_and_race_has_no_na_level(data):
    for name, rate in {"age.yrs": .005, "sex": .002, "ethncty": .01, "los": .005,
                       "charge": .01}.items():
        share = (data[:, COL[name]] == len(LEVELS[name]) - 1).mean()
        assert abs(share - rate) < 4 * np.sqrt(rate / N) + 1e-4, name  # NA not counted twice
    assert "NA" not in LEVELS["race"]


def test_tuned_medians(data):
    assert abs((data[:, COL["los"]] < 10).mean() - 0.5) < 0.01
    assert abs((data[:, COL["charge"]] < LEVELS["charge"].index("20K")).mean() - 0.5) < 0.01


def test_seed_deterministic_and_seed_sensitive():
    a = standin_discharge(500, np.random.default_rng(3))
    assert np.array_equal(a, standin_discharge(500, np.random.default_rng(3)))
    assert not np.array_equal(a, standin_discharge(500, np.random.default_rng(4)))


def test_every_variable_has_mi_with_two_others(data):
    for i in range(13):
        strong = [k for k in range(13) if k != i and plugin_mi(
            data[:, i], data[:, k], CARDINALITIES[i], CARDINALITIES[k]) > 0.01]
        assert len(strong) >= 2, f"{ORDER[i]}: MI > 0.01 only with {strong}"


def test_fig7_linear_regression_positive_and_significant(data):
    x, charge, _ = regression.design(data)
    beta, t = regression.ols(x, charge)
    assert (beta[1:] > 0).all(), beta
    assert (np.abs(t[1:]) > 5).all(), t
    ref = sm.OLS(charge, x).fit()  # the hand-written OLS agrees with statsmodels
    assert np.allclose(beta, ref.params) and np.allclose(t, ref.tvalues)


def test_logistic_irls_matches_statsmodels(data):
    x, _, high = regression.design(data[:20_000])
    beta, z = regression.logistic(x, high)
    ref = sm.Logit(high, x).fit(disp=0)
    assert np.allclose(beta, ref.params, atol=1e-6) and np.allclose(z, ref.tvalues, atol=1e-4)


def test_age_sex_zip_cells_not_degenerate(data):
    key = (data[:, COL["age.yrs"]] * 3 + data[:, COL["sex"]]) * 16 + data[:, COL["patzip"]]
    share = np.bincount(key, minlength=18 * 3 * 16) / N
    assert share.max() < 0.02  # no cell dominates
    assert (share > 0).sum() > 0.6 * share.size  # most cells occur
    assert (np.bincount(key) == 1).sum() > 0  # some are rare


def test_load_csv_round_trip(tmp_path):
    codes = standin_discharge(50, np.random.default_rng(1))
    path = tmp_path / "d.csv"
    frame = schema().decode(codes)
    frame[list(reversed(ORDER))].to_csv(path, index=False)  # any column order
    assert np.array_equal(load_discharge_csv(path), codes)


@pytest.mark.parametrize("change, message", [
    (lambda f: f.assign(extra=1), "data: unknown column 'extra' (allowed: typ, age.yrs"),
    (lambda f: f.drop(columns="sev"), "data: no column 'sev'"),
    (lambda f: f.assign(sex=["X"] + list(f["sex"][1:])), "data.sex: level 'X' is not in"),
])
def test_load_csv_rejects_in_one_line_and_writes_nothing(tmp_path, change, message):
    frame = schema().decode(standin_discharge(5, np.random.default_rng(1)))
    path = tmp_path / "bad.csv"
    change(frame).to_csv(path, index=False)
    before = sorted(tmp_path.iterdir())
    with pytest.raises(ConfigError) as err:
        load_discharge_csv(path)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert sorted(tmp_path.iterdir()) == before


def test_na_label_is_a_level_not_missing(tmp_path):
    path = tmp_path / "na.csv"
    row = {name: levels[-1] for name, levels in LEVELS.items()}
    pd.DataFrame([row]).to_csv(path, index=False)
    assert load_discharge_csv(path).tolist() == [[c - 1 for c in CARDINALITIES]]
