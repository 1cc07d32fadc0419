"""S4's solver bench (experiments/bi_shen/s4/solver_bench.py) on a small grid (the report's run
is profile=reduced at p = 250): both solvers sweep the same fits, the former one is configured
as the docstring says, the speed-ups are the ratios of the measured seconds, and the agreement
table counts what it says it counts."""

import numpy as np
import pandas as pd
import pytest

from experiments.bi_shen.paper import PAPER
from experiments.bi_shen.s4 import solver_bench
from harness import config
from harness.engine.study import load_study

SMALL = {**solver_bench.SETTINGS, "profile": "ci", "n_jobs": 1,
         "overrides": ("study.grid.N=[40]", "study.grid.p=[12]", "study.epsilon=[1]",
                       "methods=[NP,DIP_25]")}


@pytest.fixture(scope="module")
def small():
    return solver_bench.make_tables(SMALL, log=lambda *_: None)


def test_the_former_solver_is_unscreened_at_ratio_ten_and_the_current_is_the_configured(tmp_path):
    former = solver_bench._config(SMALL, SMALL["solvers"]["former"], str(tmp_path))
    current = solver_bench._config(SMALL, SMALL["solvers"]["current"], str(tmp_path))
    opts = load_study(former["study"]).solver_options()
    assert opts["screen"] is False and opts["balance_ratio"] == 10.0
    opts = load_study(current["study"]).solver_options()
    assert "screen" not in opts and "balance_ratio" not in opts  # the solver's defaults
    assert config.load(["study=bi_shen_s4", "profile=reduced"])["n_replicates"] == 2


def test_both_solvers_sweep_the_same_fits_and_the_speedups_are_ratios(small):
    bench, methods, agree = (small[k] for k in ("solver_bench", "solver_methods",
                                                "solver_agreement"))
    print(bench.to_string(index=False), methods.to_string(index=False),
          agree.to_string(index=False), sep="\n")
    assert list(bench["solver"]) == ["former", "current"]
    assert list(bench["screen"]) == [False, True] and list(bench["balance_ratio"]) == [10, 2]
    assert (bench["tasks"] == 2).all() and (bench["replicates"] == 2).all()
    assert (bench["sweep_seconds"] > 0).all() and (bench["task_cpu_seconds"] > 0).all()
    assert np.allclose(bench["cpu_seconds_per_replicate"], bench["task_cpu_seconds"] / 2,
                       rtol=1e-4)
    former, current = bench.iloc[0], bench.iloc[1]
    assert current["speedup_wall"] == pytest.approx(
        former["sweep_seconds"] / current["sweep_seconds"], rel=1e-3)
    assert current["speedup_cpu"] == pytest.approx(
        former["task_cpu_seconds"] / current["task_cpu_seconds"], rel=1e-3)
    assert sorted(methods["method"]) == ["DIP_25", "NP"]
    assert methods["former"].sum() == pytest.approx(former["task_cpu_seconds"], rel=1e-3)
    # every fit of each method (2 replicates, one ε) is compared, and every one converged
    assert sorted(agree["method"]) == ["DIP_25", "NP"] and (agree["fits"] == 2).all()
    assert (agree["converged_former"] == 2).all() and (agree["converged_current"] == 2).all()
    assert (agree["max_relative_difference"] < 0.5).all()


def _fits(losses):
    index = pd.MultiIndex.from_tuples(
        [("chain", "NP", 0.0, r) for r in range(len(losses))], names=solver_bench.KEYS)
    return pd.DataFrame({"entropy_loss": losses, "glasso_converged": 1.0}, index=index)


def test_agreement_counts_identical_and_moved_fits():
    got = solver_bench.agreement(_fits([10.0, 20.0, 30.0]), _fits([10.0, 20.001, 36.0]))
    row = got.iloc[0]
    assert (row["fits"], row["identical"], row["moved"]) == (3, 1, 1)  # 30 -> 36 moved 20 %
    assert row["max_relative_difference"] == pytest.approx(0.2)
    assert row["converged_former"] == 3


def test_registered_as_a_computation_of_the_paper():
    c = PAPER.computations[solver_bench.NAME]
    assert c.make is solver_bench.make_tables and c.settings == solver_bench.SETTINGS
    assert c.settings["profile"] == "reduced" and list(c.settings["solvers"]) == ["former",
                                                                                  "current"]
