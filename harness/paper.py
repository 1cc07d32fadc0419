"""Papers: what a paper package declares about its studies (DESIGN §2, §8).

A paper package ``experiments/<paper>/`` holds a ``paper.py`` whose ``PAPER`` lists, explicitly,
every study of the paper (by its config name, in report order) with its claims, tables, figures
and loop oracle. Nothing is found by file name: a study's parts are what its paper declares.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .errors import ConfigError


@dataclass(frozen=True)
class StudyParts:
    """The companions of one study: ``claims`` (a sequence of :class:`harness.claims.Claim`),
    ``tables`` (name → function of the rows), ``figures`` (name → function of the metrics) and
    ``loop`` (the record-level loop oracle ``release_and_pool``, or None)."""

    claims: Sequence = ()
    tables: Mapping[str, Callable] = field(default_factory=dict)
    figures: Mapping[str, Callable] = field(default_factory=dict)
    loop: Callable | None = None


NO_PARTS = StudyParts()


@dataclass(frozen=True)
class Paper:
    """A paper: its short name (``bowen_liu``), its citation, and its studies (study config
    name → :class:`StudyParts`, in the order of the paper's report)."""

    name: str
    title: str
    studies: Mapping[str, StudyParts]


def load_paper(name: str) -> Paper:
    """The ``PAPER`` of ``experiments.<name>.paper``; an unknown name is a one-line error."""
    module_name = f"experiments.{name}.paper"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name not in (module_name, f"experiments.{name}"):
            raise
        raise ConfigError(f"paper: {name!r} is not allowed (allowed: {', '.join(papers())})") \
            from None
    return module.PAPER


def papers() -> list[str]:
    """Names of the paper packages under ``experiments/`` that declare a ``paper.py``."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "experiments"
    return sorted(p.parent.name for p in root.glob("*/paper.py"))
