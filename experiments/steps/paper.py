"""Bowen, Liu & Su (STEPS): the paper's studies with their claims, tables and figures, and a
reduced CPS sweep: ``steps_cps_reduced``, the same study on a 3,000-record
stand-in, 2 repetitions and log ε ∈ {−2, 0, 2}, a cheap check beside the paper-size run; and
``steps_sim_addremove``, the simulation's DP PrivBayes calibrated under add/remove
neighbours (``study.relation``), as the tree methods already are: its default is substitution,
which at the same nominal ε gives its counts twice the noise of an add/remove calibration
(issue 25 item 3). The report sets it beside the main sweep's methods."""

from __future__ import annotations

from harness.paper import Computation, Paper, StudyParts, Variant

from .cps_study import claims as cps_claims
from .cps_study import figures as cps_figures
from .cps_study import tables as cps_tables
from .sim import claims as sim_claims
from .sim import figures as sim_figures
from .sim import tables as sim_tables

SIM, CPS = "steps_sim", "steps_cps"

PAPER = Paper(
    name="steps",
    title=("Bowen, C. M., Liu, F. and Su, B. Differentially private data release via "
           "statistical election to partition sequentially."),
    studies={
        SIM: StudyParts(sim_claims.CLAIMS, sim_tables.TABLES, sim_figures.FIGURES),
        CPS: StudyParts(cps_claims.CLAIMS, cps_tables.TABLES, cps_figures.FIGURES),
    },
    variants={
        f"{CPS}_reduced": Variant(
            base=CPS,
            overrides=("study.grid.n=[3000]", "study.replicates.paper=2",
                       "study.log_epsilon=[-2,0,2]"),
            claims=cps_claims.CLAIMS, tables=cps_tables.TABLES),
        f"{SIM}_addremove": Variant(
            base=SIM,
            overrides=("study.relation=add/remove",
                       # the tree methods are add/remove already (their rows would be the
                       # base sweep's: the same streams), so only the DP PrivBayes is swept;
                       # the report sets it beside the base sweep's methods
                       "methods=[PrivBayes]"),
            claims=sim_claims.CLAIMS, tables=sim_tables.TABLES),
    },
    computations={
        # the law of the simulation's AIC/EM split (which trees STEPS builds), from the model
        f"{SIM}_split": Computation(
            sim_tables.split_law, sim_tables.SPLIT_SETTINGS,
            "the probability that the simulation's STEPS (AIC/EM) picks each two-cluster split, "
            "per model, n and ε, over data sets of the model"),
        # Tables 1-2: the CPS study's original data (the stand-in) beside the paper's
        cps_tables.DATA_TABLES: Computation(
            cps_tables.data_tables, cps_tables.DATA_SETTINGS,
            "Table 1's marginals and Table 2's cell-size frequencies of the CPS study's "
            "original data beside the paper's"),
    },
)
