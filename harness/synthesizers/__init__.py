"""Synthesizers, one family per module; each registers itself by name."""

from . import baselines, laplace_sanitizer, modips, prior_based  # noqa: F401  (registration)
from .base import REGISTRY, Release, SetwiseSynthesizer, Synthesizer, make_synthesizer, register

__all__ = [
    "REGISTRY",
    "Release",
    "SetwiseSynthesizer",
    "Synthesizer",
    "make_synthesizer",
    "register",
]
