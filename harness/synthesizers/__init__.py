"""Synthesizers, one family per module; each registers itself by name."""

from . import (  # noqa: F401  (registration)
    baselines,
    cell_histogram,
    dip,
    histogram,
    laplace_sanitizer,
    laplace_tables,
    modips,
    pegs,
    pgm,
    pmi,
    prior_based,
    private_glm,
    private_svm,
    privbayes,
    pseudo_posterior,
    record_noise,
    steps,
    tabular,
)
from .base import Release, SetwiseSynthesizer, Synthesizer
from .registry import REGISTRY, make_synthesizer, register

__all__ = [
    "REGISTRY",
    "Release",
    "SetwiseSynthesizer",
    "Synthesizer",
    "make_synthesizer",
    "register",
]
