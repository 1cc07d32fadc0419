"""The synthesizer registry: name -> class, for the harness's own synthesizers (each module
decorates its classes with :func:`register`) and for those of installed plug-ins (the entry
point group ``dips_harness.synthesizers``, see :mod:`harness.plugins`), which are loaded on
first need: an unknown name, ``harness list synthesizers``, a task's fingerprint.
:func:`make_synthesizer` builds one by name with one-line errors.
"""

from __future__ import annotations

import inspect

from ..errors import ConfigError, allowed
from ..plugins import loaded_entry_points, source_hash
from .base import Synthesizer

#: entry point group of synthesizer plug-ins
GROUP = "dips_harness.synthesizers"

REGISTRY: dict[str, type[Synthesizer]] = {}
#: synthesizer name -> where it came from ("harness", or "plug-in <package> <version>")
ORIGINS: dict[str, str] = {}
#: synthesizer name -> one-line reason, for plug-ins that could not be loaded
BROKEN: dict[str, str] = {}
_VERSIONS: dict[str, str] = {}  # plug-in synthesizer name -> package version + source hash
_loaded = False


def register(cls: type[Synthesizer]) -> type[Synthesizer]:
    """Class decorator: make a synthesizer available by its ``name``."""
    if cls.name in REGISTRY:
        raise RuntimeError(f"synthesizer {cls.name!r} registered twice")
    REGISTRY[cls.name] = cls
    return cls


def make_synthesizer(name: str, key: str = "", **params) -> Synthesizer:
    """Instantiate a registered synthesizer; unknown names or parameters and invalid values raise
    a ConfigError whose key starts with ``key`` (e.g. ``study.roster.LAP``)."""
    prefix = f"{key}." if key else ""
    if name not in REGISTRY:  # perhaps a plug-in's
        require(name, prefix)
    if name not in REGISTRY:
        raise allowed(f"{prefix}synthesizer", name, sorted(REGISTRY))
    cls = REGISTRY[name]
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ConfigError(
            f"{prefix}{unknown[0]}: unknown parameter of {name} (allowed: {', '.join(accepted)})"
        )
    try:
        return cls(**params)
    except ConfigError as exc:
        raise ConfigError(f"{prefix}{exc}") from None


def load_synthesizer_plugins() -> None:
    """Register every synthesizer plug-in once per process (idempotent)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in REGISTRY:
        ORIGINS.setdefault(name, "harness")
    for ep, package, where, cls in loaded_entry_points(GROUP, "plug-in", BROKEN):
        if not (inspect.isclass(cls) and issubclass(cls, Synthesizer)):
            BROKEN[ep.name] = f"{where} is not a Synthesizer subclass"
            continue
        if getattr(cls, "name", None) != ep.name:
            BROKEN[ep.name] = (f"{where}: its class name attribute is {cls.name!r}, not the "
                               f"entry point's name {ep.name!r}")
            continue
        if ep.name in REGISTRY and REGISTRY[ep.name] is not cls:
            BROKEN[ep.name] = f"{where} clashes with the {ORIGINS[ep.name]} synthesizer"
            continue
        REGISTRY[ep.name] = cls
        ORIGINS[ep.name] = f"plug-in {package}"
        _VERSIONS[ep.name] = f"{package}+{source_hash(cls)}"


def require(name: str, prefix: str = "") -> None:
    """A broken plug-in that is asked for by name is a one-line error naming it."""
    load_synthesizer_plugins()
    if name in BROKEN:
        raise ConfigError(f"{prefix}synthesizer: {BROKEN[name]}")


def version(name: str) -> str | None:
    """Package version and source hash of a plug-in synthesizer (None for the harness's own)."""
    load_synthesizer_plugins()
    return _VERSIONS.get(name)
