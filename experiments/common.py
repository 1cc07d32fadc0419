"""Small helpers shared by paper packages (config parsing, scenario checks)."""

from __future__ import annotations

import math
from fractions import Fraction

from harness.errors import ConfigError


def as_number(key: str, value) -> float:
    """A config number; strings such as "1/3" are read as exact fractions."""
    if isinstance(value, str):
        try:
            return float(Fraction(value.replace(" ", "")))
        except (ValueError, ZeroDivisionError):
            raise ConfigError(
                f"{key}: expected a number or a fraction like 1/3, got {value!r}"
            ) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{key}: expected a finite number, got {value!r}")
    return float(value)


def per_cell_diagnostic(diagnostics, method: str, prefix: str) -> dict:
    """{cell: values over the replicates} of a method's per-cell release diagnostics named
    ``<prefix><cell>`` (e.g. ``bins_cell_3``), at the method's first ε: the quantities read this
    way (original cell counts, bins per cell) do not depend on ε. Empty when the sweep holds
    none."""
    if diagnostics is None or diagnostics.empty:
        return {}
    d = diagnostics[(diagnostics["method"] == method)
                    & diagnostics["diagnostic"].str.startswith(prefix)]
    if d.empty:
        return {}
    d = d[d["log_epsilon"] == d["log_epsilon"].min()]
    return {int(name.rsplit("_", 1)[1]): g["value"].to_numpy(float)
            for name, g in d.groupby("diagnostic", sort=True)}
