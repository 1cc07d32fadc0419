"""Errors shown to users as one line: they name the offending key and the allowed values."""


class ConfigError(ValueError):
    """Invalid configuration, data or command-line input."""


def allowed(key: str, value, choices) -> ConfigError:
    """``ConfigError`` for a value outside a finite set of choices."""
    return ConfigError(f"{key}: {value!r} is not allowed (allowed: {', '.join(map(str, choices))})")


class IncompleteSweep(ConfigError):
    """Results were asked for before the sweep that makes them has finished."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a sweep once its workers were stopped: ``saved`` of its
    ``total`` tasks are stored, and the same command resumes it."""

    def __init__(self, saved: int, total: int):
        super().__init__(saved, total)
        self.saved, self.total = saved, total


def interrupted_line(exc: KeyboardInterrupt) -> str:
    """The one line Ctrl-C prints: how many tasks are saved, when a sweep was stopped."""
    if isinstance(exc, SweepInterrupted):
        return (f"interrupted: {exc.saved} of {exc.total} tasks saved; run the same command "
                f"to resume")
    return "interrupted; run the same command to resume"
