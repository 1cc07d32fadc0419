"""CI's regression check: every study has a committed profile=ci snapshot, and a fresh
profile=ci sweep of the current code passes ``harness check`` (statistical mode) against it.

A change that shifts a metric beyond its Monte Carlo error fails here until the snapshot is
deliberately rewritten with ``harness check --update study=<s> profile=ci`` and committed.
"""

import contextlib
import io

import pytest

from harness import cli
from harness import config as config_mod
from harness.engine import check

STUDIES = config_mod.options("study")
#: the order the snapshots are checked in (each runs its study's sweep if no other test has): the
#: papers in reverse, so that this worker meets the other, which takes the study files in
#: collection order, in the middle; Park & Ghosh's last (the other worker starts with it,
#: tests/conftest.py FIRST)
ORDER = sorted(STUDIES, key=lambda s: (s == "park_ghosh_maps", [-ord(c) for c in s]))


def test_every_study_has_a_ci_snapshot():
    missing = [s for s in STUDIES if not (check.REFERENCE_DIR / s / "ci.parquet").exists()]
    assert not missing, f"no results/reference/<study>/ci.parquet for {missing}"


@pytest.mark.slow
@pytest.mark.parametrize("study", ORDER)
def test_ci_sweep_matches_its_snapshot(study, ci_sweep_of):
    """``harness check`` on the session's shared profile=ci sweep: every task is done, so the
    check reads, aggregates and compares (the claims and table tests read the same sweep)."""
    cfg, _, _ = ci_sweep_of(study)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(["check", f"study={study}", "profile=ci", f"out_dir={cfg['out_dir']}"])
    print(out.getvalue()[-3000:])
    assert " already done, 0 run, 0 failed" in out.getvalue()  # no second sweep
    assert status == 0, out.getvalue()[-3000:] + err.getvalue()[-2000:]
