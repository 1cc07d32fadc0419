"""Tests of harness.metrics.performance (Morris, White & Crowther 2019, Table 6)."""

import math

import numpy as np
import pandas as pd
import pytest

from harness.metrics import METRICS, performance_metrics, wide


def make_rows(
    est,
    truth=2.0,
    *,
    scenario="s1",
    method="A",
    epsilon=1.0,
    variance=None,
    ci=None,
    usable=None,
    **extra,
):
    r = len(est)
    rows = pd.DataFrame(
        {
            "scenario": scenario,
            "method": method,
            "epsilon": epsilon,
            "log_epsilon": math.log(epsilon) if epsilon == epsilon else np.nan,
            "estimand": "pi",
            "truth": truth,
            "replicate": np.arange(r),
            "estimate": np.asarray(est, dtype=float),
            "variance": np.ones(r) if variance is None else np.asarray(variance, dtype=float),
            "df": np.inf,
            "m": 1,
            "usable": np.ones(r, dtype=bool) if usable is None else np.asarray(usable, dtype=bool),
        }
    )
    ci = [(e - 1.0, e + 1.0) for e in est] if ci is None else ci
    rows["ci_low"] = [c[0] for c in ci]
    rows["ci_high"] = [c[1] for c in ci]
    for k, v in extra.items():
        rows[k] = v
    return rows


def metric(table, name, **keys):
    sel = table["metric"] == name
    for k, v in keys.items():
        sel &= table[k].isna() if v != v else table[k] == v
    row = table[sel]
    assert len(row) == 1, (name, keys, len(row))
    return row.iloc[0]


def mean(xs):
    total = 0.0
    for x in xs:
        total += x
    return total / len(xs)


def sample_var(xs):
    mu = mean(xs)
    total = 0.0
    for x in xs:
        total += (x - mu) ** 2
    return total / (len(xs) - 1)


# A tiny example computed by hand below with plain loops.
EST = [1.0, 2.5, 3.0, 2.1]
VAR = [0.25, 0.36, 0.16, 0.49]
CI = [(0.5, 1.5), (2.0, 3.0), (2.2, 3.8), (np.nan, np.nan)]
TRUTH = 2.0


@pytest.fixture
def tiny():
    return performance_metrics(make_rows(EST, TRUTH, variance=VAR, ci=CI))


def test_tiny_bias_mse_rmse(tiny):
    r = len(EST)
    errors = [e - TRUTH for e in EST]
    bias = mean(errors)
    emp_se = math.sqrt(sample_var(EST))
    mse = mean([x * x for x in errors])
    se_mse = math.sqrt(sum((x * x - mse) ** 2 for x in errors) / (r * (r - 1)))
    rmse = math.sqrt(mse)

    assert metric(tiny, "bias").value == pytest.approx(bias)
    assert metric(tiny, "bias").mcse == pytest.approx(emp_se / math.sqrt(r))
    assert metric(tiny, "rel_bias").value == pytest.approx(bias / TRUTH)
    assert metric(tiny, "rel_bias").mcse == pytest.approx(emp_se / math.sqrt(r) / TRUTH)
    assert metric(tiny, "mse").value == pytest.approx(mse)
    assert metric(tiny, "mse").mcse == pytest.approx(se_mse)
    assert metric(tiny, "rmse").value == pytest.approx(rmse)
    assert metric(tiny, "rmse").mcse == pytest.approx(se_mse / (2 * rmse))
    assert metric(tiny, "scaled_rmse").value == pytest.approx(rmse / TRUTH)
    assert metric(tiny, "emp_se").value == pytest.approx(emp_se)
    m4 = float(np.mean((np.asarray(EST) - np.mean(EST)) ** 4))
    assert metric(tiny, "emp_se").mcse == pytest.approx(
        math.sqrt(max(m4 - (r - 3) / (r - 1) * emp_se**4, 0) / r) / (2 * emp_se))
    assert metric(tiny, "bias").n_rep == r


def test_tiny_coverage_width(tiny):
    covered = []
    for lo, hi in CI:
        covered.append(1.0 if (lo <= TRUTH <= hi) else 0.0)  # NaN compares False
    p = mean(covered)
    assert p == 0.25
    widths = [hi - lo for lo, hi in CI if np.isfinite(lo) and np.isfinite(hi)]
    cov, wid = metric(tiny, "coverage"), metric(tiny, "width")
    assert cov.value == pytest.approx(p)
    assert cov.mcse == pytest.approx(math.sqrt(p * (1 - p) / 4))
    assert cov.n_rep == 4
    assert wid.value == pytest.approx(mean(widths))
    assert wid.mcse == pytest.approx(math.sqrt(sample_var(widths) / len(widths)))
    assert wid.n_rep == 3


def test_tiny_model_se(tiny):
    r = len(VAR)
    model_se = math.sqrt(mean(VAR))
    var_v = sample_var(VAR)
    emp_se = math.sqrt(sample_var(EST))
    ratio = model_se / emp_se
    assert metric(tiny, "model_se").value == pytest.approx(model_se)
    assert metric(tiny, "model_se").mcse == pytest.approx(math.sqrt(var_v / (4 * r * model_se**2)))
    rel = metric(tiny, "rel_error_model_se")
    assert rel.value == pytest.approx(100 * (ratio - 1))
    expected = 100 * ratio * math.sqrt(var_v / (4 * r * model_se**4) + 1 / (2 * (r - 1)))
    assert rel.mcse == pytest.approx(expected)
    assert metric(tiny, "usable_prop").value == 1.0


def test_layout_and_carry():
    rows = make_rows(EST, TRUTH, n=40, pi=0.25)
    out = performance_metrics(rows, carry=("n", "pi", "log_epsilon", "truth"))
    assert list(out.columns) == [
        "scenario",
        "method",
        "epsilon",
        "estimand",
        "n",
        "pi",
        "log_epsilon",
        "truth",
        "metric",
        "value",
        "mcse",
        "n_rep",
    ]
    assert list(out["metric"]) == list(METRICS)
    assert (out["n"] == 40).all() and (out["pi"] == 0.25).all()
    with pytest.raises(KeyError):
        performance_metrics(rows, carry=("not_a_column",))


def test_nan_epsilon_groups_kept_separate():
    rows = pd.concat(
        [
            make_rows([1.0, 1.0], 0.0, method="A", epsilon=1.0),
            make_rows([2.0, 2.0], 0.0, method="A", epsilon=np.nan),
            make_rows([3.0, 3.0], 0.0, method="Ori", epsilon=np.nan),
            make_rows([4.0, 4.0], 0.0, method="Ori", epsilon=np.nan, scenario="s2"),
        ],
        ignore_index=True,
    )
    out = performance_metrics(rows)
    bias = out[out["metric"] == "bias"]
    assert len(bias) == 4
    assert metric(out, "bias", method="A", epsilon=1.0).value == 1.0
    assert metric(out, "bias", method="A", epsilon=np.nan).value == 2.0
    assert metric(out, "bias", method="Ori", epsilon=np.nan, scenario="s1").value == 3.0
    assert metric(out, "bias", method="Ori", scenario="s2").value == 4.0
    assert bias["log_epsilon"].isna().sum() == 3


def test_unusable_discard_changes_r():
    est = [1.0, 3.0, 2.0, 10.0]
    usable = [True, True, True, False]
    ci = [(0.0, 3.0), (1.0, 4.0), (-1.0, 1.0), (0.0, 20.0)]  # the unusable CI covers 2
    rows = make_rows(est, 2.0, ci=ci, usable=usable)

    kept = performance_metrics(rows)
    assert metric(kept, "usable_prop").value == 0.75
    assert metric(kept, "usable_prop").n_rep == 4
    assert metric(kept, "usable_prop").mcse == pytest.approx(math.sqrt(0.75 * 0.25 / 4))
    assert metric(kept, "bias").n_rep == 3
    assert metric(kept, "bias").value == pytest.approx(0.0)
    assert metric(kept, "coverage").value == pytest.approx(2 / 3)
    assert metric(kept, "width").value == pytest.approx(mean([3.0, 3.0, 2.0]))

    everything = performance_metrics(rows, discard_unusable=False)
    assert metric(everything, "bias").n_rep == 4
    assert metric(everything, "bias").value == pytest.approx(mean([-1.0, 1.0, 0.0, 8.0]))
    assert metric(everything, "coverage").value == pytest.approx(2 / 4)  # unusable: not covering
    assert metric(everything, "coverage").n_rep == 4


def test_zero_and_one_usable_replicates():
    rows = pd.concat(
        [
            make_rows([1.0, 2.0], 2.0, method="none", usable=[False, False]),
            make_rows([2.5, 9.0], 2.0, method="one", usable=[True, False]),
        ],
        ignore_index=True,
    )
    out = performance_metrics(rows)
    none = out[out["method"] == "none"].set_index("metric")
    assert none.loc["usable_prop", "value"] == 0.0
    others = none.drop(index="usable_prop")
    assert others["value"].isna().all() and others["mcse"].isna().all()
    assert (others["n_rep"] == 0).all()
    one = out[out["method"] == "one"].set_index("metric")
    assert one.loc["bias", "value"] == pytest.approx(0.5)
    assert one.loc["mse", "value"] == pytest.approx(0.25)
    assert one.loc["coverage", "value"] == 1.0
    assert one.drop(index="usable_prop")["mcse"].isna().all()
    assert np.isnan(one.loc["emp_se", "value"])


def test_scale_column_and_zero_scale():
    rows = make_rows(EST, TRUTH, sigma2=4.0)
    out = performance_metrics(rows, scale="sigma2")
    bias = metric(out, "bias")
    assert metric(out, "rel_bias").value == pytest.approx(bias.value / 4.0)
    assert metric(out, "rel_bias").mcse == pytest.approx(bias.mcse / 4.0)
    assert metric(out, "scaled_rmse").value == pytest.approx(metric(out, "rmse").value / 4.0)

    zero = performance_metrics(make_rows(EST, 0.0))
    assert np.isnan(metric(zero, "rel_bias").value)
    assert np.isnan(metric(zero, "scaled_rmse").value)
    assert np.isfinite(metric(zero, "bias").value)


def test_normal_estimator_statistics():
    rng = np.random.default_rng(20240501)
    r, theta = 20_000, 0.3
    est = theta + rng.standard_normal(r)
    rows = make_rows(est, theta, ci=list(zip(est - 1.959964, est + 1.959964, strict=True)))
    out = performance_metrics(rows)
    cov, bias = metric(out, "coverage"), metric(out, "bias")
    assert abs(cov.value - 0.95) < 4 * cov.mcse
    assert abs(bias.value) < 4 * bias.mcse
    assert bias.mcse == pytest.approx(1 / math.sqrt(r), rel=0.03)
    assert metric(out, "emp_se").value == pytest.approx(1.0, abs=4 * metric(out, "emp_se").mcse)
    assert metric(out, "model_se").value == pytest.approx(1.0)
    assert metric(out, "width").value == pytest.approx(2 * 1.959964)


def test_long_wide_round_trip():
    rows = pd.concat(
        [
            make_rows(EST, TRUTH, variance=VAR, ci=CI),
            make_rows([0.5, 1.5, 1.0], 1.0, method="Ori", epsilon=np.nan),
            make_rows([0.5, 1.5, 1.0, 0.7], 1.0, method="B", epsilon=0.5),
        ],
        ignore_index=True,
    )
    long = performance_metrics(rows)
    w = wide(long)
    assert len(w) == 3
    assert [c for c in w.columns if c in METRICS] == list(METRICS)
    assert all(f"{m}_mcse" in w.columns for m in METRICS)
    assert w["epsilon"].isna().sum() == 1

    id_cols = ["scenario", "method", "epsilon", "estimand", "log_epsilon", "truth"]
    values = w.melt(
        id_vars=id_cols, value_vars=list(METRICS), var_name="metric", value_name="value"
    )
    mcses = w.melt(
        id_vars=id_cols,
        value_vars=[f"{m}_mcse" for m in METRICS],
        var_name="metric",
        value_name="mcse",
    )
    mcses["metric"] = mcses["metric"].str.removesuffix("_mcse")
    back = values.merge(mcses, on=[*id_cols, "metric"])
    keys = ["method", "metric"]
    back = back.sort_values(keys).reset_index(drop=True)
    orig = long.drop(columns="n_rep").sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(back[orig.columns], orig, check_dtype=False)

    n_rep = wide(long, values="n_rep")
    width_n = n_rep.loc[n_rep["method"] == "A", "width"].item()
    assert metric(long, "width", method="A").n_rep == width_n == 3
    assert not any(c.endswith("_mcse") for c in n_rep.columns)
    with pytest.raises(ValueError):
        wide(pd.concat([long, long]))


def test_sd_mcse_is_morris_for_normal_estimates_and_grows_with_the_tails():
    from harness.metrics import sd_mcse

    rng = np.random.default_rng(3)
    r, reps = 400, 4000
    # normal estimates: the formula agrees with Morris et al.'s s / sqrt(2(R - 1)) ...
    x = rng.standard_normal((reps, r))
    dev = x - x.mean(axis=1, keepdims=True)
    var, m4 = x.var(axis=1, ddof=1), (dev**4).mean(axis=1)
    se = sd_mcse(r, var, m4)
    assert np.median(se / (np.sqrt(var) / np.sqrt(2 * (r - 1)))) == pytest.approx(1.0, abs=0.03)
    # ... and with the spread of s over repeated studies, for normal and heavy-tailed values
    # contaminated normal: 5% of the values 3x wider (kurtosis 7.7: heavy tails, finite moments)
    wide = rng.standard_normal((reps, r)) * np.where(rng.random((reps, r)) < 0.05, 3.0, 1.0)
    for draws in (x, wide, rng.binomial(1, 0.03, (reps, r))):
        dev = draws - draws.mean(axis=1, keepdims=True)
        var, m4 = draws.var(axis=1, ddof=1), (dev**4).mean(axis=1)
        spread = np.sqrt(var).std()
        # the root mean square of the estimated MCSE (its square is nearly unbiased for Var(s))
        assert np.sqrt(np.mean(sd_mcse(r, var, m4) ** 2)) == pytest.approx(spread, rel=0.1)
    # where the normal formula understates it more than twofold
    assert np.sqrt(wide.var(axis=1, ddof=1)).std() > 1.5 * np.sqrt(wide.var() / (2 * (r - 1)))
    assert np.isnan(sd_mcse(1, 1.0, 1.0)) and sd_mcse(5, 0.0, 0.0) == 0.0
