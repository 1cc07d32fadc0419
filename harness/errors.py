"""Errors shown to users as one line: they name the offending key and the allowed values."""

import re


class ConfigError(ValueError):
    """Invalid configuration, data or command-line input."""


def plain(value):
    """``value`` as a user typed it: numpy scalars become Python numbers, so messages show
    ``150.0``, not ``np.float64(150.0)``."""
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "shape", None) == ():
        return item()
    return value


def allowed(key: str, value, choices) -> ConfigError:
    """``ConfigError`` for a value outside a finite set of choices."""
    return ConfigError(f"{key}: {plain(value)!r} is not allowed (allowed: "
                       f"{', '.join(map(str, choices))})")


#: numpy's repr of a scalar (numpy >= 2), e.g. ``np.float64(150.0)``, ``np.int64(3)``,
#: ``np.True_``
_NUMPY_REPR = re.compile(r"\bnp\.(?:(?:float|int|uint|bool|complex)\w*\(([^()]*)\)|(True|False)_)")


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` as one line for stderr: its first non-empty line, with numpy
    scalar reprs shown as plain numbers (a message built with ``{value!r}`` from a numpy value
    anywhere in the code)."""
    text = next((s.strip() for s in str(exc).splitlines() if s.strip()), type(exc).__name__)
    return _NUMPY_REPR.sub(lambda m: m.group(1) or m.group(2), text)


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
