"""Session-wide fixtures: each study's ``profile=ci`` sweep runs once per test session, and every
test that needs it (the regression snapshot, the claims, the tables) reads the same sweep."""

import pytest
from study_helpers import ci_sweep


@pytest.fixture(scope="session")
def ci_sweep_of(tmp_path_factory):
    """``ci_sweep_of(study)`` → (config, rows, metrics) of the study's profile=ci sweep, run on
    first use into one session directory (``<basetemp>/ci_sweeps``) and shared after that."""
    out = tmp_path_factory.mktemp("ci_sweeps", numbered=False)
    done = {}

    def get(study: str):
        if study not in done:
            done[study] = ci_sweep(study, out)
        return done[study]

    return get
