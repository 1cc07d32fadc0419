"""Errors shown to users as one line: they name the offending key and the allowed values."""


class ConfigError(ValueError):
    """Invalid configuration, data or command-line input."""


def allowed(key: str, value, choices) -> ConfigError:
    """``ConfigError`` for a value outside a finite set of choices."""
    return ConfigError(f"{key}: {value!r} is not allowed (allowed: {', '.join(map(str, choices))})")


class IncompleteSweep(ConfigError):
    """Results were asked for before the sweep that makes them has finished."""
