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


def check_axis(key: str, values, *, integer=False, minimum=None, open_interval=None) -> None:
    for v in values:
        bad = isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
        bad = bad or (integer and not float(v).is_integer())
        bad = bad or (minimum is not None and v < minimum)
        bad = bad or (open_interval is not None and not open_interval[0] < v < open_interval[1])
        if bad:
            rule = "an integer" if integer else "a number"
            if minimum is not None:
                rule += f" >= {minimum}"
            if open_interval is not None:
                rule += f" in ({open_interval[0]}, {open_interval[1]})"
            raise ConfigError(f"{key}: every value must be {rule}, got {v!r}")
