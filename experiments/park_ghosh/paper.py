"""Park & Ghosh, "Perturbed Gibbs Samplers for Synthetic Data Release" (arXiv 1312.5370): the
studies of its §4, in report order (spec 001)."""

from __future__ import annotations

from harness.paper import Paper, StudyParts, Table

from .maps import chains as maps_chains
from .maps import claims as maps_claims
from .maps import figures as maps_figures
from .maps import tables as maps_tables

PAPER = Paper(
    name="park_ghosh",
    title="Park & Ghosh, Perturbed Gibbs Samplers for Synthetic Data Release (arXiv 1312.5370)",
    studies={
        "park_ghosh_maps": StudyParts(
            claims=maps_claims.CLAIMS,
            tables={"alpha": Table(maps_tables.alpha_table, reads=("metrics",)),
                    "headline": Table(maps_tables.headline, reads=("metrics",)),
                    "table3_trace": Table(maps_tables.trace_table, reads=("metrics",)),
                    "figure4_tvd": Table(maps_chains.tvd_table, reads=("metrics",)),
                    "pmi_fits": Table(maps_tables.pmi_fits, reads=("diagnostics",))},
            figures={"figure4_chains": maps_chains.figure4, **maps_figures.FIGURES},
        ),
    },
)
