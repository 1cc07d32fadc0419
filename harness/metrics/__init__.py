"""Performance metrics of simulation studies with Monte Carlo standard errors; utility
(``utility``, ``propensity``: SPECKS and pMSE, ``association``: pooled χ² tests and their
agreement, ``overlap``: CI overlap) and disclosure-risk (``risk``) metrics of released
categorical records; ``ranking``: rank tables of methods over metrics."""

from .performance import DEFAULT_BY, METRICS, performance_metrics, sd_mcse, wide

__all__ = ["DEFAULT_BY", "METRICS", "performance_metrics", "sd_mcse", "wide"]
