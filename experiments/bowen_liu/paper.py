"""Bowen & Liu (2020): the paper's studies and, for each, its claims, tables, figures and loop
oracle, declared explicitly."""

from __future__ import annotations

from harness.paper import Computation, Paper, StudyParts

from .fertility import claims as fertility_claims
from .fertility import tables as fertility_tables
from .sim1 import claims as sim1_claims
from .sim1 import figures as sim1_figures
from .sim1 import loop as sim1_loop
from .sim1 import tables as sim1_tables
from .sim2 import claims as sim2_claims
from .sim2 import figures as sim2_figures
from .sim2 import loop as sim2_loop
from .sim2 import tables as sim2_tables
from .sim3 import claims as sim3_claims
from .sim3 import figures as sim3_figures
from .sim3 import loop as sim3_loop
from .sim3 import tables as sim3_tables
from .sim4 import claims as sim4_claims
from .sim4 import figures as sim4_figures
from .sim4 import ppc as sim4_ppc
from .sim4 import tables as sim4_tables
from .sim4 import traces as sim4_traces

PAPER = Paper(
    name="bowen_liu",
    title=("Bowen, C. M. and Liu, F. (2020). Comparative study of differentially private data "
           "synthesis methods. Statistical Science 35(2), 280-307."),
    studies={
        "bowen_liu_sim1": StudyParts(sim1_claims.CLAIMS, sim1_tables.TABLES, sim1_figures.FIGURES,
                                     sim1_loop.release_and_pool),
        "bowen_liu_sim2": StudyParts(sim2_claims.CLAIMS, sim2_tables.TABLES, sim2_figures.FIGURES,
                                     sim2_loop.release_and_pool),
        "bowen_liu_sim3": StudyParts(sim3_claims.CLAIMS, sim3_tables.TABLES, sim3_figures.FIGURES,
                                     sim3_loop.release_and_pool),
        "bowen_liu_sim4": StudyParts(sim4_claims.CLAIMS, sim4_tables.TABLES,
                                     sim4_figures.FIGURES),
        "bowen_liu_fertility": StudyParts(fertility_claims.CLAIMS, fertility_tables.TABLES),
    },
    computations={
        # Supplementary Table 8: posterior-predictive p-values of SLOMAG and the GLOM fitted to
        # the original Sim 4 data (not a sweep: MS's machinery on 100 of the study's data sets),
        # collected among Sim 4's own tables
        sim4_ppc.NAME: Computation(
            sim4_ppc.make_tables, sim4_ppc.SETTINGS,
            "Supplementary Table 8: posterior-predictive p-values of SLOMAG and the GLOM "
            "(both covariance sources) on the first 100 original Sim 4 data sets",
            study="bowen_liu_sim4"),
        # Supplementary Figure 8: the paper's random-walk Metropolis traces of β1, one repeat
        sim4_traces.NAME: Computation(
            sim4_traces.make_tables, sim4_traces.SETTINGS,
            "Supplementary Figure 8: random-walk Metropolis traces of β1 (MS and "
            "MODIPS-Correct) on one original Sim 4 data set",
            figures=sim4_traces.FIGURES),
    },
)
