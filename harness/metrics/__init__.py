"""Performance metrics of simulation studies with Monte Carlo standard errors."""

from .performance import DEFAULT_BY, METRICS, performance_metrics, sd_mcse, wide

__all__ = ["DEFAULT_BY", "METRICS", "performance_metrics", "sd_mcse", "wide"]
