"""Bowen & Liu (2020): the paper's studies and, for each, its claims, tables, figures and loop
oracle, declared explicitly (DESIGN §8)."""

from __future__ import annotations

from harness.paper import Paper, StudyParts

from . import (
    fertility_claims,
    fertility_tables,
    sim1_claims,
    sim1_figures,
    sim1_loop,
    sim1_tables,
    sim2_claims,
    sim2_figures,
    sim2_loop,
    sim2_tables,
    sim3_claims,
    sim3_figures,
    sim3_loop,
    sim3_tables,
    sim4_claims,
    sim4_figures,
    sim4_tables,
)

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
)
