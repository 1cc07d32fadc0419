"""Hu, Savitsky & Williams: the paper's studies with their claims and tables, and the variant
sweeps of the repeated-sampling study that the report's findings quote."""

from __future__ import annotations

from harness.paper import Computation, Paper, StudyParts, Variant

from . import bound_spread, nuts_validation
from .mc import claims as mc_claims
from .mc import figures as mc_figures
from .mc import tables as mc_tables
from .sdr import claims as sdr_claims
from .sdr import figures as sdr_figures
from .sdr import standin_cells
from .sdr import tables as sdr_tables
from .single import claims as single_claims
from .single import figures as single_figures
from .single import tables as single_tables

MC = "hu_savitsky_williams_mc"
SDR = "hu_savitsky_williams_sdr"
SINGLE = "hu_savitsky_williams_single"
#: a variant sweeps FBS and FBP only, and is checked against the claims on them alone
SYNTHS_ONLY = ("methods=[FBS,FBP]",)
SYNTH_CLAIMS = [c for c in mc_claims.CLAIMS if set(c.methods) <= set(mc_claims.SYNTHS)]


def _variant(*overrides: str) -> Variant:
    return Variant(base=MC, overrides=(*SYNTHS_ONLY, *overrides), claims=SYNTH_CLAIMS,
                   tables=mc_tables.VARIANT_TABLES)


PAPER = Paper(
    name="hu_savitsky_williams",
    title=("Hu, J., Savitsky, T. D. and Williams, M. R. Private tabular survey data products "
           "through synthetic microdata generation."),
    studies={
        SDR: StudyParts(sdr_claims.CLAIMS, sdr_tables.TABLES, sdr_figures.FIGURES),
        SINGLE: StudyParts(single_claims.CLAIMS, single_tables.TABLES,
                           single_figures.FIGURES),
        MC: StudyParts(mc_claims.CLAIMS, mc_tables.TABLES, mc_figures.FIGURES),
    },
    variants={
        # FBP's π on the inclusion-probability scale of Eq. 6 (spec §9.4), not the mean-1 scale
        f"{MC}_pi_actual": _variant("study.roster.FBP.pi_scale=actual"),
        # the design-consistent FBP count variance, stratified by field (spec A21)
        f"{MC}_count_stratified": _variant("study.fbp_count_variance=stratified"),
    },
    computations={
        # NUTS under the paper's priors vs the exact conjugate engine on one sample (§11.5)
        nuts_validation.NAME: Computation(
            nuts_validation.make_tables, nuts_validation.SETTINGS,
            "FBS and FBP fitted by the conjugate engine and by NUTS on one simulated sample"),
        # the Monte Carlo spread of a tuned Δ_α: exact refits at the tuned α (issue 11)
        bound_spread.NAME: Computation(
            bound_spread.make_tables, bound_spread.SETTINGS,
            "Δ_α of exact FBS and FBP refits at the tuned α of one simulated sample"),
        # the SDR stand-in's cells: the top record of each and the spread over samples (issue 25)
        standin_cells.NAME: Computation(
            standin_cells.make_tables, standin_cells.SETTINGS,
            "the SDR stand-in sample's cell mean salaries: top record, and spread over samples",
            study=SDR),
    },
)
