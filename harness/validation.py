"""Checks of user-supplied values that fail with one-line ConfigErrors naming the key."""

from __future__ import annotations

import math

from .errors import ConfigError, plain


def check_number(key: str, value, *, integer=False, minimum=None, open_interval=None):
    """Return ``value`` if it is a finite number meeting the constraints; else raise."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    ok = ok and math.isfinite(value)
    ok = ok and not (integer and not float(value).is_integer())
    ok = ok and not (minimum is not None and value < minimum)
    ok = ok and not (open_interval is not None and not open_interval[0] < value < open_interval[1])
    if not ok:
        rule = "an integer" if integer else "a number"
        if minimum is not None:
            rule += f" >= {minimum}"
        if open_interval is not None:
            rule += f" in ({open_interval[0]}, {open_interval[1]})"
        raise ConfigError(f"{key}: must be {rule}, got {plain(value)!r}")
    return value


def check_each(key: str, values, **constraints) -> None:
    """``check_number`` on every value of a list (a grid axis)."""
    for v in values:
        try:
            check_number(key, v, **constraints)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(": must be", ": every value must be", 1)) from None


def check_label(key: str, value) -> str:
    """A grid value that names something (a setting of the study): a non-empty string."""
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{key}: every value must be a name (a string), got {value!r}")
    return value
