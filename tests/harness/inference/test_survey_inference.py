"""Survey domain estimators and Taylor-linearised variances (harness.inference.survey), the
half-sample replicate weights, and the combining rule's m = 1 and B = 0 cases on survey tables."""

import numpy as np
import pytest

from harness.errors import ConfigError
from harness.inference import combine
from harness.inference.survey import (
    cell_constant_weights,
    domain_means,
    domain_totals,
    half_sample_weights,
    survey_table,
    two_way_domains,
)

DOMAINS = two_way_domains(["a", "b", "c"], ["M", "F"])  # 6 cells, 12 domains


def _data(seed=0, n=120, n_strata=3):
    rng = np.random.default_rng(seed)
    strata = np.sort(rng.integers(0, n_strata, n))
    cells = rng.integers(0, DOMAINS.n_cells, n)
    w = rng.gamma(2.0, 50.0, n)
    y = rng.lognormal(11.0, 0.4, n)
    return cells, w, y, strata


def _loop_variance(z_fn, cells, strata, n_strata, n_domains):
    """Brute force: V_D = Σ_h n_h/(n_h − 1) Σ_{i∈h} (z_i − z̄_h)², z from z_fn(D) over all n."""
    out = np.zeros(n_domains)
    for d in range(n_domains):
        z = z_fn(d)
        for h in range(n_strata):
            zh = z[strata == h]
            nh = zh.size
            out[d] += nh / (nh - 1) * sum((zi - zh.mean()) ** 2 for zi in zh)
    return out


def _in_domain(cells, d):
    return DOMAINS.matrix[cells, d] > 0


@pytest.mark.parametrize("stratified", [True, False])
def test_linearised_variances_match_a_brute_force_loop(stratified):
    cells, w, y, strata = _data()
    h = 3 if stratified else 1
    s = strata if stratified else np.zeros_like(strata)
    n_dom = len(DOMAINS.names)
    est_n, var_n = domain_totals(cells, w, DOMAINS, s if stratified else None, h)
    est_m, var_m = domain_means(cells, w, y, DOMAINS, s if stratified else None, h)
    totals = np.array([w[_in_domain(cells, d)].sum() for d in range(n_dom)])
    means = np.array([(w * y)[_in_domain(cells, d)].sum() / totals[d] for d in range(n_dom)])
    assert est_n == pytest.approx(totals, rel=1e-12)
    assert est_m == pytest.approx(means, rel=1e-12)
    loop_n = _loop_variance(lambda d: np.where(_in_domain(cells, d), w, 0.0), cells, s, h, n_dom)
    loop_m = _loop_variance(
        lambda d: np.where(_in_domain(cells, d), w * (y - means[d]) / totals[d], 0.0),
        cells, s, h, n_dom)
    assert var_n == pytest.approx(loop_n, rel=1e-9)
    assert var_m == pytest.approx(loop_m, rel=1e-9)


def test_srs_with_equal_weights_reduces_to_s2_over_n():
    rng = np.random.default_rng(3)
    n, big_n = 200, 10_000
    y = rng.normal(50.0, 7.0, n)
    cells = rng.integers(0, DOMAINS.n_cells, n)
    w = np.full(n, big_n / n)
    mean, var = domain_means(cells, w, y, DOMAINS)
    assert mean[0] == pytest.approx(y.mean(), rel=1e-12)
    assert var[0] == pytest.approx(y.var(ddof=1) / n, rel=1e-10)
    total, tvar = domain_totals(cells, w, DOMAINS)
    assert total[0] == pytest.approx(big_n) and tvar[0] == pytest.approx(0.0, abs=1e-6)
    # a domain count under SRS: N² p̂(1 − p̂)/(n − 1) (the binomial form with n − 1)
    p = np.mean(_in_domain(cells, 3))
    assert tvar[3] == pytest.approx(big_n**2 * p * (1 - p) / (n - 1), rel=1e-10)


def test_vectorised_over_leading_axes():
    parts = [_data(seed) for seed in range(4)]
    stack = [np.stack([p[k] for p in parts]).reshape(2, 2, -1) for k in range(4)]
    got = domain_means(stack[0], stack[1], stack[2], DOMAINS, stack[3], 3)
    for i, p in enumerate(parts):
        one = domain_means(p[0], p[1], p[2], DOMAINS, p[3], 3)
        assert got[0].reshape(4, -1)[i] == pytest.approx(one[0], rel=1e-12)
        assert got[1].reshape(4, -1)[i] == pytest.approx(one[1], rel=1e-12)


def test_cell_constant_weights_give_unweighted_cells_and_size_weighted_margins():
    cells, w, y, strata = _data(1)
    table = survey_table(cells, w, y, DOMAINS, strata, 3, mean_weights="cell_constant")
    names = DOMAINS.names
    cell_means = {}
    for c in range(DOMAINS.n_cells):
        r, g = divmod(c, 2)
        name = f"{'abc'[r]}|{'MF'[g]}"
        cell_means[name] = y[cells == c].mean()
        assert table.means[names.index(name)] == pytest.approx(cell_means[name], rel=1e-12)
    sizes = {f"{'abc'[c // 2]}|{'MF'[c % 2]}": w[cells == c].sum() for c in range(6)}
    for margin, members in (("a|*", ["a|M", "a|F"]), ("*|F", ["a|F", "b|F", "c|F"])):
        expect = sum(sizes[k] * cell_means[k] for k in members) / sum(sizes[k] for k in members)
        assert table.means[names.index(margin)] == pytest.approx(expect, rel=1e-12)
    a = cell_constant_weights(cells, w, DOMAINS.n_cells)
    assert a[cells == 2] == pytest.approx(np.full((cells == 2).sum(), sizes["b|M"] /
                                                  (cells == 2).sum()))


def test_interior_cells_add_to_margins_and_stratification_matters_for_counts_only():
    cells, w, y, strata = _data(2)
    # a field-like design: strata = rows of the table, so interior cells lie within one stratum
    strata = cells // 2
    st = survey_table(cells, w, y, DOMAINS, strata, 3, count_variance="stratified")
    un = survey_table(cells, w, y, DOMAINS, strata, 3, count_variance="unstratified")
    names = DOMAINS.names
    for r in "abc":
        assert st.counts[names.index(f"{r}|*")] == pytest.approx(
            st.counts[names.index(f"{r}|M")] + st.counts[names.index(f"{r}|F")], rel=1e-12)
    # a row margin (= a whole stratum): the unstratified form adds the between-stratum term
    for r in "abc":
        i = names.index(f"{r}|*")
        assert un.count_variance[i] > 2 * st.count_variance[i]
    assert un.means == pytest.approx(st.means) and un.counts == pytest.approx(st.counts)
    assert un.mean_variance == pytest.approx(st.mean_variance)  # means stay stratified
    # means: both forms give the same residual sums within the stratum (n_h/(n_h−1) vs n/(n−1))
    nh, n = (strata == 0).sum(), strata.size
    one = domain_means(cells, w, y, DOMAINS)[1]  # unstratified
    i = names.index("a|M")
    assert st.mean_variance[i] == pytest.approx(one[i] * (nh / (nh - 1)) / (n / (n - 1)),
                                                rel=1e-9)


def test_half_sample_weights():
    cells, w, y, strata = _data(4, n=101)
    rw = half_sample_weights(w, strata, 3, 10, np.random.default_rng(0))
    assert rw.shape == (10, 101)
    for h in range(3):
        nh = (strata == h).sum()
        kept = (rw[:, strata == h] > 0).sum(axis=1)
        assert (kept == nh // 2).all()
        factor = rw[:, strata == h][rw[:, strata == h] > 0] / np.tile(w[strata == h], (10, 1))[
            rw[:, strata == h] > 0]
        assert factor == pytest.approx(np.full(factor.size, nh / (nh // 2)))
    assert not np.array_equal(rw[0] > 0, rw[1] > 0)
    again = half_sample_weights(w, strata, 3, 10, np.random.default_rng(0))
    assert np.array_equal(rw, again)


def test_combining_rule_edge_cases_on_survey_estimates():
    cells, w, y, strata = _data(5)
    est, var = domain_means(cells, w, y, DOMAINS, strata, 3)
    one = combine(est[None, None], var[None, None])  # m = 1
    assert one.variance[0] == pytest.approx(var) and np.isinf(one.df).all()
    half = 1.959963984540054 * np.sqrt(var)
    assert one.ci_high[0] - one.estimate[0] == pytest.approx(half, rel=1e-12)
    same = combine(np.stack([est, est, est])[None], np.stack([var, 2 * var, 3 * var])[None])
    assert same.between[0] == pytest.approx(np.zeros_like(est), abs=0.0)  # b = 0
    assert np.isinf(same.df).all() and same.variance[0] == pytest.approx(2 * var)
    assert same.ci_low[0] == pytest.approx(est - 1.959963984540054 * np.sqrt(2 * var))


@pytest.mark.parametrize("bad, key", [
    ("negative", "weights"), ("missing", "weights"), ("strata_range", "strata"),
    ("strata_shape", "strata"), ("single", "strata")])
def test_bad_inputs_are_one_line_errors_naming_the_key(bad, key):
    cells, w, y, strata = _data(6)
    if bad == "negative":
        w[3] = -1.0
    elif bad == "missing":
        w[5] = np.nan
    elif bad == "strata_range":
        strata[0] = 7
    elif bad == "strata_shape":
        strata = strata[:-1]
    with pytest.raises(ConfigError) as info:
        if bad == "single":
            strata = np.where(np.arange(strata.size) == 0, 3, strata)  # stratum 3: one record
            half_sample_weights(w, strata, 4, 10, np.random.default_rng(0))
        else:
            domain_means(cells, w, y, DOMAINS, strata, 3)
    message = str(info.value)
    assert message.startswith(f"{key}:") and "\n" not in message
