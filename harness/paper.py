"""Papers: what a paper package declares about its studies.

A paper package ``experiments/<paper>/`` holds a ``paper.py`` whose ``PAPER`` lists, explicitly,
every study of the paper (by its config name, in report order) with its claims, tables, figures
and loop oracle. Nothing is found by file name: a study's parts are what its paper declares.

A paper may also declare **variants** of its studies (:class:`Variant`): a study run again with
a few config overrides (another estimator, a subset of methods) into its own sweep, with its own
tables and claims, collected by ``harness report`` beside the studies; and **computations**
(:class:`Computation`): a check that is not a Monte Carlo sweep (e.g. two posterior samplers
on one data set), whose tables the report collects like a study's.

A study's paper is the nearest ``paper`` module above the study's module in its package path
(``experiments.<paper>.<study>.study`` → ``experiments.<paper>.paper``); a study with no such
module (a plug-in study shipped on its own) has no paper and empty parts (:data:`NO_PARTS`).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError

#: what a table function may read, in the order it declares: the per-replicate interval rows,
#: the aggregated metrics table, the per-replicate metric rows, the release diagnostics
TABLE_INPUTS = ("rows", "metrics", "replicate_metrics", "diagnostics")


#: the one column of a table that could not be made from this run (:func:`not_run_table`)
NOT_RUN_COLUMN = "not_run"


def not_run_table(*what: str):
    """A table this run cannot make, as one line: a single row ``not run: <what>`` in the
    column :data:`NOT_RUN_COLUMN` (the methods that did not run, or what the table lacked)."""
    import pandas as pd

    text = ", ".join(" ".join(str(w).split()) for w in what)
    return pd.DataFrame({NOT_RUN_COLUMN: [f"not run: {text}"]})


@dataclass(frozen=True)
class Table:
    """A table of a paper (ours beside the paper's numbers): ``make`` receives, positionally,
    the sweep's inputs named in ``reads`` (see :data:`TABLE_INPUTS`), nothing found by
    inspecting its signature. A table read from the aggregated ``metrics`` costs nothing extra
    after a sweep; one read from ``rows`` scans every replicate.

    ``methods``: the methods the table needs; when its inputs hold rows of none of some of them
    (a ``methods=`` subset ran), the table is one line naming them (:func:`not_run_table`), and
    so is a table whose ``make`` raises :class:`harness.claims.MissingInput`. A table that reads
    each method it finds (one row per method present) declares none. A table whose input has
    no rows at all (no method that makes diagnostics ran) is one line too."""

    make: Callable
    reads: tuple[str, ...] = ("rows",)
    methods: tuple[str, ...] = ()

    def __post_init__(self):
        bad = [r for r in self.reads if r not in TABLE_INPUTS]
        if bad:
            raise ValueError(f"a table reads some of {TABLE_INPUTS}, got {self.reads!r}")
        if isinstance(self.methods, str):
            raise ValueError(f"a table's methods are a tuple of labels, not {self.methods!r}")

    def __call__(self, *inputs):
        from .claims import MissingInput

        if self.methods:
            present = set()
            for frame in inputs:
                if frame is not None and "method" in getattr(frame, "columns", ()):
                    present.update(frame["method"].unique())
            missing = [m for m in self.methods if m not in present]
            if missing:
                return not_run_table(*missing)
        for name, frame in zip(self.reads, inputs, strict=True):
            if frame is not None and getattr(frame, "empty", False):
                return not_run_table(f"no {name.replace('_', ' ')} in this run")
        try:
            return self.make(*inputs)
        except MissingInput as exc:
            return not_run_table(str(exc))


@dataclass(frozen=True)
class StudyParts:
    """The companions of one study: ``claims`` (a sequence of :class:`harness.claims.Claim`),
    ``tables`` (name → :class:`Table`), ``figures`` (name → function of the metrics) and
    ``loop`` (the record-level loop oracle ``release_and_pool``, or None); ``report_profile``:
    the profile whose sweep ``harness report`` collects for the study (``paper`` unless the
    paper-scale sweep is too expensive to run: the report then says which profile it shows
    and how many of profile=paper's replicates)."""

    claims: Sequence = ()
    tables: Mapping[str, Table] = field(default_factory=dict)
    figures: Mapping[str, Callable] = field(default_factory=dict)
    loop: Callable | None = None
    report_profile: str = "paper"


NO_PARTS = StudyParts()

#: config keys a variant may not override: its study is its base, its profile the report's
#: (``paper``) and its sweep is named after the variant
VARIANT_FIXED = ("study", "profile", "sweep")


@dataclass(frozen=True)
class Variant:
    """A variant sweep of the paper's study ``base``: the study at ``profile=paper`` with the
    command-line style config ``overrides`` (``"study.roster.FBP.pi_scale=actual"``,
    ``"methods=[FBS,FBP]"``), run into the sweep named after the variant, with its own
    ``claims`` and ``tables`` (as :class:`StudyParts`) and its own ``figures`` (name → function
    of the metrics, drawn into ``plots/<variant>/``; the base study's figures are not drawn).
    The study's name, and so every random stream, is the base's: a variant releases the same
    samples as its base (common random numbers)."""

    base: str
    overrides: tuple[str, ...] = ()
    claims: Sequence = ()
    tables: Mapping[str, Table] = field(default_factory=dict)
    figures: Mapping[str, Callable] = field(default_factory=dict)

    @property
    def parts(self) -> StudyParts:
        return StudyParts(claims=self.claims, tables=self.tables)


@dataclass(frozen=True)
class Computation:
    """A paper's computation outside the sweep engine: ``make()`` returns its tables (name →
    DataFrame). ``settings`` (JSON-able) name what it computes: ``harness report`` re-runs it
    only when its collected tables are missing or were made with other settings. ``figures``
    (name → function of the tables dict returning a figure, or None) are drawn from the tables
    into ``plots/<name>/`` when it runs. ``study``: one of the paper's studies whose
    ``tables/`` directory receives the tables (a table the paper prints with that study's, named
    in placeholders by the study's name; a re-collect of the study keeps them), or None for the
    computation's own ``<name>/tables/``; its ``run.json`` is ``<name>/run.json`` either way."""

    make: Callable
    settings: Mapping = field(default_factory=dict)
    description: str = ""
    figures: Mapping[str, Callable] = field(default_factory=dict)
    study: str | None = None


@dataclass(frozen=True)
class Paper:
    """A paper: its short name (its package's name), its citation, its studies (study config
    name → :class:`StudyParts`, in the order of the paper's report) and the variants of them
    its report collects (variant name → :class:`Variant`), and its computations (name →
    :class:`Computation`)."""

    name: str
    title: str
    studies: Mapping[str, StudyParts]
    variants: Mapping[str, Variant] = field(default_factory=dict)
    computations: Mapping[str, Computation] = field(default_factory=dict)

    def __post_init__(self):
        for name, c in self.computations.items():
            if name in self.studies or name in self.variants:
                raise ConfigError(f"{self.name} paper.py: computations.{name}: the name is one "
                                  f"of the paper's studies or variants; give it its own name")
            if c.study is not None and c.study not in self.studies:
                raise ConfigError(f"{self.name} paper.py: computations.{name}.study: "
                                  f"{c.study!r} is not one of the paper's studies (allowed: "
                                  f"{', '.join(self.studies)})")
        for name, v in self.variants.items():
            where = f"{self.name} paper.py: variants.{name}"
            if name in self.studies:
                raise ConfigError(f"{where}: the name is one of the paper's studies; give the "
                                  f"variant its own name")
            if v.base not in self.studies:
                raise ConfigError(f"{where}.base: {v.base!r} is not one of the paper's studies "
                                  f"(allowed: {', '.join(self.studies)})")
            if isinstance(v.overrides, str):
                raise ConfigError(f"{where}.overrides: give a tuple of key=value strings, not "
                                  f"the string {v.overrides!r}")
            for item in v.overrides:
                key = item.split("=", 1)[0].lstrip("+~") if isinstance(item, str) else ""
                if not isinstance(item, str) or "=" not in item or not key:
                    raise ConfigError(f"{where}.overrides: {item!r} is not key=value")
                if key in VARIANT_FIXED:
                    raise ConfigError(f"{where}.overrides: {key!r} is fixed for a variant (its "
                                      f"study is its base, profile=paper, sweep={name})")


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
    root = Path(__file__).resolve().parents[1] / "experiments"
    return sorted(p.parent.name for p in root.glob("*/paper.py"))


@functools.cache
def paper_module_of(module_name: str) -> str | None:
    """The name of the nearest ``paper`` module above ``module_name`` in its package path
    (``a.b.c.study`` → ``a.b.c.paper``, else ``a.b.paper``, else ``a.paper``), or None."""
    parts = module_name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        candidate = ".".join(parts[:i] + ["paper"])
        if candidate == module_name:
            continue
        try:
            spec = importlib.util.find_spec(candidate)
        except ModuleNotFoundError:  # a parent package that is not one
            spec = None
        if spec is not None:
            return candidate
    return None


def study_module_of(study) -> str:
    """The module a study was loaded from: its config's ``module``, else its class's module."""
    config = getattr(study, "config", None) or {}
    return config.get("module") or type(study).__module__


def paper_of(study) -> Paper | None:
    """The :class:`Paper` that declares ``study`` (the ``PAPER`` of the nearest ``paper`` module
    above the study's module), or None for a study without a paper."""
    name = paper_module_of(study_module_of(study))
    return None if name is None else importlib.import_module(name).PAPER


def parts_of(study) -> StudyParts:
    """The parts its paper declares for ``study`` (by the study's config name); :data:`NO_PARTS`
    for a study without a paper or one its paper does not declare."""
    paper = paper_of(study)
    return NO_PARTS if paper is None else paper.studies.get(study.name, NO_PARTS)


def code_directory(module_name: str) -> Path | None:
    """The directory whose sources belong to the study module ``module_name``: its paper's
    package directory, or, for a study without a paper, its module's package directory (None
    for a top-level module outside any package, or a module that cannot be found)."""
    paper = paper_module_of(module_name)
    try:
        spec = importlib.util.find_spec(paper or module_name)
    except (ModuleNotFoundError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    if paper is None and "." not in module_name and not spec.submodule_search_locations:
        return None  # a top-level module: no package directory of its own
    return Path(spec.origin).resolve().parent
