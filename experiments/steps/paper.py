"""Bowen, Liu & Su (STEPS): the paper's studies with their claims and tables, and the reduced
CPS sweep the report collects (DESIGN §8).

The CPS study at the paper's size (n = 44,821, 10 repetitions, 5 ε, 7 methods × 5 sets) needs
1,750 SPECKS fits of a 502-column logistic model on ≈ 90k stacked records; at the measured cost
(report) that is far beyond this machine, so the report collects ``steps_cps_reduced``: the
same study on a 3,000-record stand-in, 2 repetitions and log ε ∈ {−2, 0, 2}."""

from __future__ import annotations

from harness.paper import Paper, StudyParts, Variant

from .cps_study import claims as cps_claims
from .cps_study import tables as cps_tables
from .sim import claims as sim_claims
from .sim import figures as sim_figures
from .sim import tables as sim_tables

SIM, CPS = "steps_sim", "steps_cps"

PAPER = Paper(
    name="steps",
    title=("Bowen, C. M., Liu, F. and Su, B. Differentially private data release via "
           "statistical election to partition sequentially (seed 003; spec "
           "shared/spec/003_bowen_liu_su_steps.md)."),
    studies={
        SIM: StudyParts(sim_claims.CLAIMS, sim_tables.TABLES, sim_figures.FIGURES),
        CPS: StudyParts(cps_claims.CLAIMS, cps_tables.TABLES),
    },
    variants={
        f"{CPS}_reduced": Variant(
            base=CPS,
            overrides=("study.grid.n=[3000]", "study.replicates.paper=2",
                       "study.log_epsilon=[-2,0,2]"),
            claims=cps_claims.CLAIMS, tables=cps_tables.TABLES),
    },
)
