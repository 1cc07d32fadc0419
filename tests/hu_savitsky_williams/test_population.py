"""The simulation population and informative design rebuilt from Tables 4–5 (spec 002 §7.3)."""

import numpy as np
import pytest

from experiments.hu_savitsky_williams.population import (
    CELL_MEANS,
    CELL_SIZES,
    SALARY_SD,
    allocation,
    draw_samples,
    inclusion_probabilities,
    make_population,
)


@pytest.fixture(scope="module")
def population():
    return make_population(np.random.default_rng(0))


def test_cell_sizes_and_allocation_are_exact(population):
    assert CELL_SIZES.sum() == 100_000
    assert CELL_SIZES[:, 0].sum() == 58_534 and CELL_SIZES[:, 1].sum() == 41_466
    counts = np.bincount(population.cell, minlength=16).reshape(8, 2)
    assert np.array_equal(counts, CELL_SIZES)
    assert allocation(1000, CELL_SIZES.sum(axis=1)).tolist() == [280, 27, 40, 181, 112, 129,
                                                                 181, 50]


def test_cell_means_within_monte_carlo_error(population):
    # SD of a lognormal(μ, 0.4²) cell mean: mean·√(e^{0.16} − 1)/√N_fg
    se = CELL_MEANS * np.sqrt(np.expm1(SALARY_SD**2)) / np.sqrt(CELL_SIZES)
    z = (population.cell_means() - CELL_MEANS) / se
    assert np.abs(z).max() < 4.0
    # the derived overall mean of the spec (≈ 116,270)
    assert population.salary.mean() == pytest.approx(116_270, rel=0.005)


def test_informative_design_correlations(population):
    w_pop = 1.0 / inclusion_probabilities(population)
    assert np.corrcoef(population.salary, w_pop)[0, 1] == pytest.approx(-0.57, abs=0.02)
    batch = draw_samples(population, np.random.default_rng(1), replicates=20)
    assert batch.values.shape == (20, 1000, 3)
    corr = [np.corrcoef(batch.values[r, :, 2], batch.weights[r])[0, 1] for r in range(20)]
    assert np.mean(corr) == pytest.approx(-0.58, abs=0.03)
    assert np.bincount(batch.strata[0], minlength=8).tolist() == [280, 27, 40, 181, 112, 129,
                                                                  181, 50]
    assert (batch.strata == batch.values[..., 0]).all()
    # Hansen–Hurwitz: the weights estimate N within a few percent
    assert batch.weights.sum(axis=1).mean() == pytest.approx(100_000, rel=0.02)


def test_deterministic_given_the_generator(population):
    again = make_population(np.random.default_rng(0))
    assert np.array_equal(again.salary, population.salary)
    a = draw_samples(population, np.random.default_rng(7), replicates=2)
    b = draw_samples(population, np.random.default_rng(7), replicates=2)
    assert np.array_equal(a.values, b.values) and np.array_equal(a.weights, b.weights)
