"""Plug-ins: synthesizers and studies from other installed packages (issue "one contract",
item 8).

A package registers a synthesizer class (a :class:`harness.synthesizers.Synthesizer` subclass
with a ``name``) through an entry point of the group ``dips_harness.synthesizers`` (loaded into
the registry by :mod:`harness.synthesizers.registry`, with :func:`loaded_entry_points`)::

    [project.entry-points."dips_harness.synthesizers"]
    my_method = "my_package.synth:MyMethod"

A study registers the module that defines its ``STUDY_CLASS`` through the group
``dips_harness.studies``; its config is ``<name>.yaml`` in the module's ``conf/study/`` folder
(or in the folder the module names as ``CONF_DIR``, holding ``study/<name>.yaml``)::

    [project.entry-points."dips_harness.studies"]
    my_study = "my_package.my_study"

and ``harness study=my_study`` composes it like the shipped studies. A synthesizer is then
usable in any study's roster (``+study.roster.MINE={synthesizer: my_method, m: 5}``),
so a researcher benchmarks their own method against the papers' without forking. Plug-ins are
loaded on first need (an unknown synthesizer name, ``harness list synthesizers``), in every
worker process the same way. A plug-in that cannot be loaded is reported in one line naming it
and its package when it is needed; the others still work. Its package version and the hash of
its module's source enter the fingerprint of the tasks that run it, so a changed plug-in never
reuses stale rows.
"""

from __future__ import annotations

import hashlib
import inspect
from importlib.metadata import entry_points
from pathlib import Path

from .errors import ConfigError

STUDY_GROUP = "dips_harness.studies"
EVALUATION_GROUP = "dips_harness.evaluations"


def loaded_entry_points(group: str, kind: str, broken: dict[str, str]):
    """(entry point, "package version", description, loaded object) of every entry point of
    ``group`` that loads; one that does not is recorded in ``broken`` as one line."""
    for ep in entry_points(group=group):
        dist = getattr(ep, "dist", None)
        package = f"{dist.metadata['Name']} {dist.version}" if dist is not None else ep.value
        where = f"{kind} {ep.name} = {ep.value} (package {package})"
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - any failure of foreign code is one line
            text = str(exc).strip().splitlines()
            broken[ep.name] = (f"{where} cannot be loaded: {type(exc).__name__}"
                               f"{': ' + text[0] if text else ''}")
            continue
        yield ep, package, where, obj


def source_hash(cls) -> str:
    """The first 12 hex digits of the SHA-256 of the file that defines ``cls``."""
    try:
        return hashlib.sha256(Path(inspect.getfile(cls)).read_bytes()).hexdigest()[:12]
    except (OSError, TypeError):
        return "unknown"


# --- evaluations (metrics) -------------------------------------------------------------------
#: evaluation name -> (factory, package version + source hash)
EVALUATIONS: dict[str, tuple[object, str]] = {}
BROKEN_EVALUATIONS: dict[str, str] = {}
_evaluations_loaded = False


def load_evaluation_plugins() -> None:
    """Find every evaluation plug-in once per process (idempotent)."""
    global _evaluations_loaded
    if _evaluations_loaded:
        return
    _evaluations_loaded = True
    for ep, package, where, factory in loaded_entry_points(EVALUATION_GROUP,
                                                            "evaluation plug-in",
                                                            BROKEN_EVALUATIONS):
        if not callable(factory):
            BROKEN_EVALUATIONS[ep.name] = f"{where} is not a factory of an evaluation"
            continue
        EVALUATIONS[ep.name] = (factory, f"{package}+{source_hash(factory)}")


def evaluation_plugin(name: str, key: str):
    """The evaluation a plug-in registers as ``name`` (its factory called once); unknown or
    broken ones are a one-line error naming ``key``."""
    from .evaluation import IntervalEvaluation, MetricEvaluation

    load_evaluation_plugins()
    if name in BROKEN_EVALUATIONS:
        raise ConfigError(f"{key}: {BROKEN_EVALUATIONS[name]}")
    if name not in EVALUATIONS:
        raise ConfigError(f"{key}: no evaluation {name!r} in this study or among the plug-ins "
                          f"(plug-ins: {', '.join(sorted(EVALUATIONS)) or 'none'})")
    factory, where = EVALUATIONS[name]
    evaluation = factory()
    if not isinstance(evaluation, (IntervalEvaluation, MetricEvaluation)) or \
            evaluation.name != name:
        raise ConfigError(f"{key}: plug-in {where} does not return an evaluation named {name!r}")
    return evaluation


def evaluation_versions(names) -> dict[str, str]:
    """Package version and source hash of the plug-in evaluations among ``names``."""
    load_evaluation_plugins()
    return {n: EVALUATIONS[n][1] for n in names if n in EVALUATIONS}


# --- studies ---------------------------------------------------------------------------------
#: plug-in study name -> (its conf folder holding study/<name>.yaml, package version + hash)
STUDIES: dict[str, tuple[Path, str]] = {}
BROKEN_STUDIES: dict[str, str] = {}
_studies_loaded = False


def load_study_plugins() -> None:
    """Find every study plug-in once per process (idempotent)."""
    global _studies_loaded
    if _studies_loaded:
        return
    _studies_loaded = True
    for ep, package, where, module in loaded_entry_points(STUDY_GROUP, "study plug-in",
                                                           BROKEN_STUDIES):
        conf = Path(getattr(module, "CONF_DIR", Path(module.__file__).parent / "conf"))
        if not (conf / "study" / f"{ep.name}.yaml").is_file():
            BROKEN_STUDIES[ep.name] = f"{where} has no config {conf / 'study' / ep.name}.yaml"
            continue
        digest = hashlib.sha256(Path(module.__file__).read_bytes()).hexdigest()[:12]
        STUDIES[ep.name] = (conf, f"{package}+{digest}")


def study_conf_dirs() -> list[Path]:
    """The conf folders of the study plug-ins, for Hydra's search path."""
    load_study_plugins()
    return sorted({conf for conf, _ in STUDIES.values()})


def study_names() -> list[str]:
    load_study_plugins()
    return sorted(STUDIES)


def require_study(name: str) -> None:
    """A broken study plug-in asked for by name is a one-line error naming it."""
    load_study_plugins()
    if name in BROKEN_STUDIES:
        raise ConfigError(f"study: {BROKEN_STUDIES[name]}")


def study_version(name: str) -> str | None:
    """Package version and source hash of a plug-in study (None for the shipped studies)."""
    load_study_plugins()
    return STUDIES[name][1] if name in STUDIES else None
