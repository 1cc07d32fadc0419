"""Hu, Savitsky & Williams: the paper's studies with their claims and tables (DESIGN §8)."""

from __future__ import annotations

from harness.paper import Paper, StudyParts

from .mc import claims as mc_claims
from .mc import tables as mc_tables

PAPER = Paper(
    name="hu_savitsky_williams",
    title=("Hu, J., Savitsky, T. D. and Williams, M. R. Private tabular survey data products "
           "through synthetic microdata generation (seed 002; spec "
           "shared/spec/002_hu_savitsky_williams_survey.md)."),
    studies={
        "hu_savitsky_williams_mc": StudyParts(mc_claims.CLAIMS, mc_tables.TABLES),
    },
)
