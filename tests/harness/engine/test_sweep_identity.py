"""A sweep's identity is compared in its manifest's JSON form: a config whose settings hold a
mapping with integer keys resumes its own sweep (the manifest stores the keys as strings), and a
changed value under such a key is still refused."""

import pytest

from harness import config
from harness.engine.sweep import run_sweep
from harness.errors import ConfigError

TINY = ["study=bi_shen_s1", "profile=ci", "study.replicates.ci=2", "study.grid.n=[30]",
        "study.grid.dist=[poisson]", "study.epsilon=[1]", "methods=[LRM]", "executor.n_jobs=1"]


def _config(out, grid):
    cfg = config.load([*TINY, f"out_dir={out}"])
    cfg["study"]["roster"]["LRM"]["round_to"] = {0: grid}  # an integer-keyed mapping
    return cfg


def test_a_sweep_with_integer_mapping_keys_resumes(tmp_path):
    first = run_sweep(_config(tmp_path, [0, 1, 2, 3]), progress=False)
    assert first.ran == first.n_tasks == 1
    again = run_sweep(_config(tmp_path, [0, 1, 2, 3]), progress=False)
    assert again.skipped == 1 and again.ran == 0
    with pytest.raises(ConfigError, match=r"other settings: roster\.LRM"):
        run_sweep(_config(tmp_path, [0, 1, 2]), progress=False)
