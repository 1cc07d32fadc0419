"""Bad configurations of the Bi & Shen studies: one line naming the key, status 2, nothing
written."""

import pytest
from study_helpers import assert_bad_run_input

CASES = {
    "p not in thirds": ("bi_shen_s5", ["study.grid.p=[7]"], ["study.grid.p", "multiple of 3"]),
    "hold-out share of 1.5": ("bi_shen_s5", ["study.grid.holdout=[1.5]"],
                              ["study.grid.holdout", "(0, 1)"]),
    "negative covariate SD": ("bi_shen_s5", ["study.covariates.normal_sd=-1"],
                              ["study.covariates.normal_sd", "> 0"]),
    "unknown distribution": ("bi_shen_s2", ["study.grid.dist=[cauchy]"],
                             ["study.grid.dist", "'cauchy'", "allowed: uniform"]),
    "unknown family": ("bi_shen_s1", ["study.distributions.poisson.family=zipf"],
                       ["study.distributions.poisson.family", "'zipf'"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_config_is_one_line_and_writes_nothing(case, tmp_path):
    study, overrides, words = CASES[case]
    assert_bad_run_input(tmp_path / "out", [f"study={study}", "profile=ci", *overrides], words)
