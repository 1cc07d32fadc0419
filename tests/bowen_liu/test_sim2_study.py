"""Bowen & Liu Simulation 2: the study's data, analysis and validation, Supplementary Table 2
within Monte Carlo error, and (slow) the claims at profile=ci against the paper-profile verdicts."""

import math

import numpy as np
import pytest
from scipy import stats
from study_helpers import assert_verdicts

from experiments.bowen_liu.paper_numbers import SUPP_TABLE_2
from experiments.bowen_liu.sim2.claims import CLAIMS
from experiments.bowen_liu.sim2.study import Simulation2
from experiments.bowen_liu.sim2.tables import supp_table_2
from harness import config
from harness.engine.aggregate import read_diagnostics
from harness.errors import ConfigError


def study(**overrides):
    cfg = config.load(["study=bowen_liu_sim2"])["study"]
    cfg.update(overrides)
    s = Simulation2(cfg)
    s.validate()
    return s


SCEN = {"bounds": "asym", "n": 40, "sigma2": 4.0}


def test_data_are_clamped_normal_within_public_bounds():
    s = study()
    assert s.public_bounds(SCEN) == (-6.0, 8.0)
    assert s.public_bounds({**SCEN, "bounds": "sym"}) == (-8.0, 8.0)
    x = s.generate({**SCEN, "n": 1000}, np.random.default_rng(1), 200).values[..., 0]
    assert x.min() == -6.0 and x.max() <= 8.0
    # clamping puts the mass below μ − 3σ (Φ(−3) = 0.00135) on the lower bound
    assert np.mean(x == -6.0) == pytest.approx(stats.norm.cdf(-3), abs=4e-4)
    t = study(data_bounding="truncate").generate({**SCEN, "n": 1000}, np.random.default_rng(1),
                                                 50).values
    assert t.min() > -6.0 and t.max() < 8.0


def test_analysis_gives_mean_and_variance_with_within_variances():
    s = study()
    data = s.generate(SCEN, np.random.default_rng(2), 30)
    est, var = s.analyse(data.with_set_axis(), SCEN)
    x = data.values[..., 0]
    assert est.shape == var.shape == (30, 1, 2)
    assert np.allclose(est[:, 0, 0], x.mean(1)) and np.allclose(est[:, 0, 1], x.var(1, ddof=1))
    assert np.allclose(var[:, 0, 0], x.var(1, ddof=1) / 40)
    kappa = stats.kurtosis(x, axis=1, fisher=True, bias=True)
    assert np.allclose(var[:, 0, 1], x.var(1, ddof=1) ** 2 * (2 / 39 + kappa / 40))
    assert s.estimands(SCEN) == {"mu": 0.0, "sigma2": 4.0}


def test_methods_are_configured_from_the_scenario_bounds():
    s = study()
    pert = s.method("PERT", SCEN)
    assert pert.lower.ravel().tolist() == [-6.0] and pert.upper.ravel().tolist() == [8.0]
    assert pert.public_sd is None and pert.sensitivity == 1.0 and pert.m == 5
    assert s.method("SMOOTH", SCEN).m == 1
    assert s.method("MODIPS", SCEN).model.lower == -6.0
    public = study(bin_sd="public").method("SMOOTH", SCEN)
    assert public.public_sd.ravel().tolist() == [2.0]


@pytest.mark.parametrize("override,message", [
    (["study.grid.bounds=[tilted]"], "study.grid.bounds: 'tilted' is not allowed"),
    (["study.bin_sd=robust"], "study.bin_sd: 'robust' is not allowed"),
    (["study.data_bounding=reject"], "study.data_bounding: 'reject' is not allowed"),
    (["study.bound_settings.asym=[4,-3]"], "study.bound_settings.asym: need a < b"),
    (["study.grid.sigma2=[0]"], "study.grid.sigma2: every value must be a number in (0, inf)"),
    (["study.grid.n=[1]"], "study.grid.n: every value must be an integer >= 2"),
    (["+study.grid.pi=[0.5]"], "study.grid: the axes of bowen_liu_sim2 are bounds, n, sigma2"),
    (["+study.roster.PERT.lower=-1"], "study.roster.PERT.lower: set by the scenario"),
])
def test_bad_settings_are_one_line_errors(override, message):
    with pytest.raises(ConfigError) as err:
        config.load(["study=bowen_liu_sim2", *override])
    assert message in str(err.value) and "\n" not in str(err.value)


def test_n_20_is_allowed():
    cfg = config.load(["study=bowen_liu_sim2", "study.grid.n=[20,40]"])
    assert cfg["study"]["grid"]["n"] == [20, 40]


def test_supp_table_2_within_monte_carlo_error():
    """Scott's bins over the asymmetric public bounds of clamped data, 2000 repeats per σ²
    (the paper: 5000), pooled over σ² = 1, 4, 9: the mean within 4 combined MC SEs of the
    paper's and the median equal to the paper's."""
    s = study()
    for n, (p_min, p_mean, p_median, p_max) in SUPP_TABLE_2.items():
        bins = []
        for sigma2 in (1.0, 4.0, 9.0):
            scen = {"bounds": "asym", "n": n, "sigma2": sigma2}
            data = s.generate(scen, np.random.default_rng(int(n * 10 + sigma2)), 2000)
            bins.append(s.method("PERT", scen).bin_grid(data).total[:, 0])
        k = np.concatenate(bins)
        se = k.std(ddof=1) / math.sqrt(k.size)
        z = (k.mean() - p_mean) / math.hypot(se, se * math.sqrt(k.size / 15000))
        print(f"n={n}: ours {k.min()}/{k.mean():.3f}/{np.median(k):g}/{k.max()} "
              f"(MC SE {se:.3f}), paper {p_min}/{p_mean}/{p_median}/{p_max}, z = {z:.2f}")
        assert abs(z) < 4
        assert np.median(k) == p_median
        assert abs(k.min() - p_min) <= 1 and abs(k.max() - p_max) <= 1


# --- the study end to end at profile=ci --------------------------------------------------------
@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    cfg, rows, metrics = ci_sweep_of("bowen_liu_sim2")
    return cfg, rows, metrics, read_diagnostics(cfg)


#: Claims UNDECIDED at the ci count: every cell must clear its threshold by 2 MCSE and some sit
#: within it: 5a (MODIPS's smallest CP for σ², 0.893 against 0.90; no cell below by 2 MCSE) and
#: S1 (largest |bias|/σ of PERT 0.059 and of MODIPS from ln ε = −1 0.053 against 0.05; no cell
#: above by 2 MCSE).
MAY_BE_UNDECIDED_AT_CI = ("5a", "S1")


@pytest.mark.slow
def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    assert_verdicts(CLAIMS, ci_run[2], "bowen_liu_sim2", MAY_BE_UNDECIDED_AT_CI)


@pytest.mark.slow
def test_ci_run_diagnostics_and_rows(ci_run):
    cfg, rows, _, diagnostics = ci_run
    t = supp_table_2(diagnostics)
    print(t.to_string(index=False))
    asym = t[t["bounds"] == "asym"].set_index("n")
    for n, (_, p_mean, p_median, _) in SUPP_TABLE_2.items():
        assert asym.loc[n, "median"] == p_median
        assert abs(asym.loc[n, "mean"] - p_mean) < 4 * asym.loc[n, "mean_mcse"] * math.sqrt(2)
    # every row is usable (continuous data) and every DP row carries an ε of the grid
    assert rows["usable"].all()
    dp = rows[rows["epsilon"].notna()]
    assert np.allclose(np.sort(dp["epsilon"].unique()), np.exp(cfg["study"]["log_epsilon"]))
    lam = diagnostics[diagnostics["diagnostic"] == "lambda"]
    assert set(lam["method"]) == {"SMOOTH"} and lam["value"].between(0, 1).all()
