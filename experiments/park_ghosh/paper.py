"""Park & Ghosh, "Perturbed Gibbs Samplers for Synthetic Data Release" (arXiv 1312.5370): the
studies of its §4, in report order (spec 001)."""

from __future__ import annotations

from harness.paper import Computation, Paper, StudyParts, Table

from .maps import ablation as maps_ablation
from .maps import chains as maps_chains
from .maps import choices as maps_choices
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
                    "figure4_tvd": Table(maps_chains.tvd_table, reads=("metrics",)),
                    "pmi_fits": Table(maps_tables.pmi_fits, reads=("diagnostics",))},
            figures={"figure4_chains": maps_chains.figure4, **maps_figures.FIGURES},
        ),
    },
    # spec 001 §6: the m, B and n ablations of PeGS and PeGS.rs (issue 25 item 5)
    variants=maps_ablation.VARIANTS,
    computations={
        # Table 3 (§4.2): the sweep trace from the paper's seed beside the paper's printed one
        "park_ghosh_table3": Computation(
            maps_tables.table3_tables, maps_tables.TABLE3_SETTINGS,
            "one PeGS sweep from the paper's seed record beside the paper's Table 3"),
        # the study's key settings, quoted by the report from the config
        "park_ghosh_choices": Computation(
            maps_choices.choices_tables, maps_choices.settings(),
            "the study's key settings, from conf/study/park_ghosh_maps.yaml"),
    },
)
