"""Mechanisms, budget ledger, post-processing and the empirical privacy audit."""

from .audit import AuditResult, DeltaAuditResult, audit_delta, audit_mechanism
from .exponential import exponential_mechanism
from .gaussian import analytic_gaussian_sigma, gaussian_delta, gaussian_mechanism
from .ledger import LedgerEntry, PrivacyLedger
from .mechanisms import (
    CM2009_TARGETS,
    POSTPROCESS_RULES,
    bounded_laplace_mechanism,
    chaudhuri_monteleoni_noise,
    dirichlet_prior_pseudocount,
    geometric_mechanism,
    laplace_mechanism,
    mcclure_reiter_pseudocount,
    misscaled_laplace_mechanism,
    private_svm_laplace,
    smoothed_histogram_weight,
)
from .postprocess import at_bound, clamp, floor_at_zero, largest_remainder_round, reviewer_bounds
from .relation import Sensitivity, UnsupportedRelation
from .zcdp import exponential_zcdp, gaussian_zcdp
from .zcdp_conversion import zcdp_epsilon, zcdp_rho

__all__ = [
    "AuditResult",
    "DeltaAuditResult",
    "audit_delta",
    "audit_mechanism",
    "LedgerEntry",
    "PrivacyLedger",
    "analytic_gaussian_sigma",
    "exponential_mechanism",
    "exponential_zcdp",
    "gaussian_zcdp",
    "zcdp_epsilon",
    "zcdp_rho",
    "gaussian_delta",
    "gaussian_mechanism",
    "geometric_mechanism",
    "POSTPROCESS_RULES",
    "CM2009_TARGETS",
    "chaudhuri_monteleoni_noise",
    "bounded_laplace_mechanism",
    "at_bound",
    "clamp",
    "dirichlet_prior_pseudocount",
    "floor_at_zero",
    "laplace_mechanism",
    "largest_remainder_round",
    "mcclure_reiter_pseudocount",
    "misscaled_laplace_mechanism",
    "private_svm_laplace",
    "reviewer_bounds",
    "Sensitivity",
    "UnsupportedRelation",
    "smoothed_histogram_weight",
]
