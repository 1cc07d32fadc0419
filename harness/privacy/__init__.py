"""Mechanisms, budget ledger, post-processing and the empirical privacy audit."""

from .audit import AuditResult, audit_mechanism
from .ledger import LedgerEntry, PrivacyLedger
from .mechanisms import (
    CM2009_TARGETS,
    POSTPROCESS_RULES,
    bounded_laplace_mechanism,
    chaudhuri_monteleoni_noise,
    dirichlet_prior_pseudocount,
    laplace_mechanism,
    mcclure_reiter_pseudocount,
    private_svm_laplace,
    smoothed_histogram_weight,
)
from .postprocess import at_bound, clamp, floor_at_zero, largest_remainder_round, reviewer_bounds

__all__ = [
    "AuditResult",
    "audit_mechanism",
    "LedgerEntry",
    "PrivacyLedger",
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
    "private_svm_laplace",
    "reviewer_bounds",
    "smoothed_histogram_weight",
]
