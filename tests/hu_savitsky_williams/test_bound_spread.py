"""The Δ_α-spread computation of the report (experiments/hu_savitsky_williams/bound_spread.py):
exact refits at the tuned α, each bound the maximum over records and draws of α_i |log p|."""

import numpy as np
import pytest

from experiments.hu_savitsky_williams import bound_spread as b
from experiments.hu_savitsky_williams import nuts_validation as nv
from experiments.hu_savitsky_williams.paper import PAPER
from harness.rng import generator

SETTINGS = dict(b.SETTINGS, draws=200, refits=6)


@pytest.fixture(scope="module")
def table():
    return b.make_tables(SETTINGS)["bound_spread"].set_index("model")


def test_refits_at_the_tuned_alpha_spread_around_the_target(table):
    print(f"\n{table.to_string()}")
    assert list(table.index) == ["FBS", "FBP"] and b.NAME in PAPER.computations
    for _, row in table.iterrows():
        assert row.target - row.tol <= row.tuned_bound <= row.target
        assert row.refits == SETTINGS["refits"]
        assert row.refit_min < row.refit_median < row.refit_max and row.refit_sd > 0
        assert row.epsilon_refit_max == pytest.approx(2 * row.refit_max * SETTINGS["m"],
                                                      abs=1e-3)
        assert 0 <= row.pct_above_target <= 100


def test_a_refit_bound_is_the_record_by_draw_maximum():
    """Oracle: refit j's Δ_α recomputed record by record from its own stream's draws."""
    batch = nv.validation_sample(SETTINGS)
    synth, mod, _, prepared = nv.unweighted_fit("fbs", "conjugate", batch, SETTINGS)
    alpha = np.where(np.arange(prepared.x.shape[0]) % 3 == 0, 0.5, 1.0)
    bounds = nv.refit_bounds("fbs", mod, prepared, alpha, 2, SETTINGS)
    for j in range(2):
        d = mod.fit(prepared.x, prepared.response, alpha, SETTINGS["draws"],
                    generator(SETTINGS["seed"], nv.NAME, "fbs", "conjugate", "fresh", j))
        loglik = mod.loglik(d, prepared.x, prepared.response)
        oracle = max(alpha[i] * max(abs(v) for v in loglik[:, i]) for i in range(len(alpha)))
        assert bounds[j] == pytest.approx(oracle, rel=1e-12)
    assert bounds[0] != bounds[1]
