"""The worked example's declarations (the shape of every paper package's paper.py)."""

from __future__ import annotations

from harness.paper import Paper, StudyParts

from .survey import claims as survey_claims

PAPER = Paper(
    name="example",
    title="A worked example of the study contract (not a paper)",
    studies={"example_survey": StudyParts(claims=survey_claims.CLAIMS)},
)
