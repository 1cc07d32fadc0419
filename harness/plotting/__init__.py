"""Figures of simulation performance metrics."""

from .figures import METRIC_LABELS, default_column_label, metric_facet_figure, save_figure

__all__ = ["METRIC_LABELS", "default_column_label", "metric_facet_figure", "save_figure"]
