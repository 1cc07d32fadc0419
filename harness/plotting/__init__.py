"""Figures of simulation performance metrics."""

from .colours import method_colour, methods_to_draw
from .figures import METRIC_LABELS, default_column_label, metric_facet_figure, save_figure

__all__ = ["METRIC_LABELS", "default_column_label", "method_colour", "methods_to_draw",
           "metric_facet_figure", "save_figure"]
