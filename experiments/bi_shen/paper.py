"""Bi & Shen, distribution-invariant differential privacy: the paper's studies and, for each,
its claims and tables, declared explicitly (DESIGN §8)."""

from __future__ import annotations

from harness.paper import Paper, StudyParts

from .known_f import claims as known_claims
from .known_f import tables as known_tables
from .r1 import claims as r1_claims
from .r1 import tables as r1_tables
from .r2 import claims as r2_claims
from .r2 import tables as r2_tables
from .r3 import claims as r3_claims
from .r3 import tables as r3_tables
from .s3 import claims as s3_claims
from .s3 import tables as s3_tables
from .s4 import claims as s4_claims
from .s4 import tables as s4_tables
from .s5 import claims as s5_claims
from .s5 import tables as s5_tables

PAPER = Paper(
    name="bi_shen",
    title=("Bi, X. and Shen, X. Distribution-invariant differential privacy. Journal of "
           "Econometrics (seed 004; spec shared/spec/004_bi_shen_dip.md)."),
    studies={
        "bi_shen_s5": StudyParts(s5_claims.CLAIMS, s5_tables.TABLES),
        "bi_shen_s3": StudyParts(s3_claims.CLAIMS, s3_tables.TABLES),
        "bi_shen_s4": StudyParts(s4_claims.CLAIMS, s4_tables.TABLES),
        "bi_shen_s2": StudyParts(known_claims.S2_CLAIMS, known_tables.S2_TABLES),
        "bi_shen_s1": StudyParts(known_claims.S1_CLAIMS, known_tables.S1_TABLES),
        "bi_shen_r1": StudyParts(r1_claims.CLAIMS, r1_tables.TABLES),
        "bi_shen_r2": StudyParts(r2_claims.CLAIMS, r2_tables.TABLES),
        "bi_shen_r3": StudyParts(r3_claims.CLAIMS, r3_tables.TABLES),
    },
)
