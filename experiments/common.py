"""Small helpers shared by paper packages (config parsing, scenario checks)."""

from __future__ import annotations

import math
from fractions import Fraction

from harness.errors import ConfigError
from harness.validation import check_each


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


def check_axis(key: str, values, **constraints) -> None:
    """Every value of a grid axis meets the constraints of ``harness.validation.check_number``."""
    check_each(key, values, **constraints)
