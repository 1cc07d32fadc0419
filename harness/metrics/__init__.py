"""Performance metrics of simulation studies with Monte Carlo standard errors; utility
(``utility``) and disclosure-risk (``risk``) metrics of released categorical records."""

from .performance import DEFAULT_BY, METRICS, performance_metrics, sd_mcse, wide

__all__ = ["DEFAULT_BY", "METRICS", "performance_metrics", "sd_mcse", "wide"]
