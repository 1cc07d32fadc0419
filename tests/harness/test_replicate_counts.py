"""Every study yaml states its own replicate count for each standard profile, and the composed
config runs exactly that count. A study that inherits another's yaml (``defaults``) otherwise
takes the parent's count for any key it drops: S4 once ran S3's ci count of 40 (406 s of CI)
after its ``ci: 2`` was lost in a reorganisation of its profiles."""

from pathlib import Path

import pytest
import yaml

from harness import config

CONF = Path(__file__).resolve().parents[2] / "conf" / "study"
STUDIES = sorted(CONF.glob("*.yaml"))
PROFILES = ("ci", "quick", "paper")


def _own_counts(path: Path) -> dict:
    return (yaml.safe_load(path.read_text()) or {}).get("replicates") or {}


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_each_study_runs_the_counts_its_own_yaml_states(path):
    own = _own_counts(path)
    missing = [p for p in PROFILES if p not in own]
    assert not missing, f"{path}: replicates.{missing[0]} is not stated in the study's own yaml"
    for profile in sorted(set(PROFILES) | set(own)):
        cfg = config.load([f"study={path.stem}", f"profile={profile}"])
        assert cfg["n_replicates"] == own[profile], (path.stem, profile)


def test_a_dropped_key_would_be_caught():
    """The check above is not vacuous: S4 inherits S3's yaml, and the two ci counts differ."""
    s3, s4 = (_own_counts(CONF / f"bi_shen_{s}.yaml") for s in ("s3", "s4"))
    assert "bi_shen_s3" in yaml.safe_load((CONF / "bi_shen_s4.yaml").read_text())[
        "defaults"]
    assert s3["ci"] != s4["ci"]
