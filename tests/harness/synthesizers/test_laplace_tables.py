"""The Laplace-mechanism baseline for survey tables (harness.synthesizers.laplace_tables): the
paper's budget split, local sensitivities by margin level, and the noisy half-sample variance,
each against a plain loop."""

import numpy as np
import pytest

from harness.data import RecordBatch
from harness.inference.survey import half_sample_weights
from harness.privacy.ledger import SUBSTITUTION
from harness.schema import Schema
from harness.synthesizers import make_synthesizer
from harness.synthesizers.laplace_tables import laplace_table_budget

SCHEMA = Schema.from_config({"columns": [
    {"name": "field", "levels": [1, 2, 3]}, {"name": "gender", "levels": ["M", "F"]},
    {"name": "y", "bounds": [0.0, 1e8]}]})


def _batch(replicates=2, n=90, seed=0):
    rng = np.random.default_rng(seed)
    field = np.sort(rng.integers(0, 3, (replicates, n)), axis=-1)
    gender = rng.integers(0, 2, (replicates, n))
    y = rng.lognormal(11.0, 0.4, (replicates, n))
    w = rng.gamma(3.0, 40.0, (replicates, n))
    values = np.stack([field, gender, y], axis=-1).astype(float)
    return RecordBatch(values, None, 1, SCHEMA.names, w, field, SCHEMA)


@pytest.mark.parametrize("eps, point, rep", [(8.0, 0.5, 0.05), (10.8, 0.675, 0.0675)])
def test_budget_split_of_the_paper(eps, point, rep):
    b = laplace_table_budget(eps, replicates=10)
    assert b["point"] == pytest.approx(point, rel=1e-12)
    assert b["variance"] == pytest.approx(point, rel=1e-12)
    assert b["replicate"] == pytest.approx(rep, rel=1e-12)
    assert 8 * b["point"] + 8 * 10 * b["replicate"] == pytest.approx(eps, rel=1e-12)


def _domain_members(values, d_name):
    r, c = d_name.split("|")
    keep = np.ones(values.shape[0], bool)
    if r != "*":
        keep &= values[:, 0] == int(r) - 1
    if c != "*":
        keep &= values[:, 1] == ["M", "F"].index(c)
    return keep


def test_release_matches_a_loop_over_domains_and_replicates():
    data = _batch()
    eps = 10.8
    rel = make_synthesizer("laplace_tables", replicates=10).release(
        data, eps, np.random.default_rng(5))
    assert rel.kind == "statistics" and rel.m == 1
    assert rel.ledger.total_epsilon() == pytest.approx(eps, rel=1e-12)
    assert len(rel.ledger.entries) == 2 * 4 * 11
    assert {e.relation for e in rel.ledger.entries} == {SUBSTITUTION}
    names = rel.sets.domains.names
    levels = rel.sets.domains.levels
    # the loop: same generator calls in the same order (half-samples, then noise by table and
    # level: the point, then the replicates)
    rng = np.random.default_rng(5)
    rw = half_sample_weights(data.weights, data.strata, 3, 10, rng)
    budget = laplace_table_budget(eps, 10)
    for table in ("counts", "means"):
        est = np.zeros((2, len(names)))
        reps = np.zeros((2, 10, len(names)))
        sens = np.zeros((2, len(names)))
        for r in range(2):
            v, w = data.values[r], data.weights[r]
            for d, name in enumerate(names):
                inside = _domain_members(v, name)
                wd, yd = w[inside], v[inside, 2]
                if table == "counts":
                    est[r, d] = wd.sum()
                    sens[r, d] = wd.max() - wd.min()
                    reps[r, :, d] = [rw[r, k][inside].sum() for k in range(10)]
                else:
                    est[r, d] = (wd * yd).sum() / wd.sum()
                    sens[r, d] = ((wd * yd).max() - (wd * yd).min()) / (
                        wd.sum() - (wd.max() - wd.min()))
                    reps[r, :, d] = [(rw[r, k][inside] * yd).sum() / rw[r, k][inside].sum()
                                     for k in range(10)]
        noisy, noisy_reps = est.copy(), reps.copy()
        for level in ("all", "column", "row", "interior"):
            idx = [d for d in range(len(names)) if levels[d] == level]
            s = sens[:, idx].max(axis=1)[:, None]
            noisy[:, idx] += rng.laplace(0.0, 1.0, (2, len(idx))) * s / budget["point"]
            for k in range(10):
                noisy_reps[:, k, idx] += (rng.laplace(0.0, 1.0, (2, len(idx)))
                                          * s / budget["replicate"])
        var = np.array([[np.mean([(noisy_reps[r, k, d] - noisy[r, d]) ** 2 for k in range(10)])
                         for d in range(len(names))] for r in range(2)])
        got = rel.sets.counts if table == "counts" else rel.sets.means
        got_var = rel.sets.count_variance if table == "counts" else rel.sets.mean_variance
        assert got[:, 0] == pytest.approx(noisy, rel=1e-10)
        assert got_var[:, 0] == pytest.approx(var, rel=1e-9)
    scales = {e.statistic: e.scale for e in rel.ledger.entries}
    assert scales["counts, interior domains: point"] == pytest.approx(
        max(np.ptp(data.weights[r][_domain_members(data.values[r], nm)])
            for r in range(2) for nm in names if "*" not in nm) / budget["point"])


def test_laplace_tables_rejects_bad_input():
    from harness.errors import ConfigError

    data = _batch()
    strata = data.strata.copy()
    strata[0, 0] = 5  # a stratum of one record: no half-samples
    bad = RecordBatch(data.values, None, 1, SCHEMA.names, data.weights, strata, SCHEMA)
    with pytest.raises(ConfigError, match=r"^strata: stratum 5 has a single record"):
        make_synthesizer("laplace_tables").release(bad, 1.0, np.random.default_rng(0))
    with pytest.raises(ConfigError, match=r"^replicates: "):
        make_synthesizer("laplace_tables", replicates=1)


def test_released_at_the_epsilon_of_matched_pseudo_posterior_sets():
    data = _batch()
    synth = make_synthesizer("laplace_tables", match_sets=3)
    assert synth.privacy_parameter == "lipschitz_bound"
    assert synth.claimed_epsilon(1.8) == pytest.approx(10.8, rel=1e-12)
    rel = synth.release(data, 1.8, np.random.default_rng(5))
    plain = make_synthesizer("laplace_tables").release(data, 10.8, np.random.default_rng(5))
    assert rel.epsilon == pytest.approx(10.8, rel=1e-12)
    assert rel.ledger.total_epsilon() == pytest.approx(10.8, rel=1e-12)
    assert np.array_equal(rel.sets.counts, plain.sets.counts)
    assert np.array_equal(rel.sets.mean_variance, plain.sets.mean_variance)
