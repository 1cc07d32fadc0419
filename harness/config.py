"""Configuration: Hydra 1.3 composition (``conf/``) and validation (DESIGN §7).

Everything is validated before anything is written. Problems raise :class:`ConfigError` with a
one-line message that names the key and the allowed values.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from .errors import ConfigError, allowed
from .validation import check_number as _number

CONF_DIR = Path(os.environ.get("HARNESS_CONF", Path(__file__).resolve().parents[1] / "conf"))
GROUPS = ("study", "profile", "executor")
TOP_KEYS = (
    "study", "profile", "executor", "seed", "out_dir", "sweep", "block_size", "methods",
    "figures_dir",
)


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def _precheck(overrides: list[str]) -> None:
    for item in overrides:
        m = re.fullmatch(r"([+~]{0,2})([\w.\-/]+)=(.*)", item)
        if not m:
            raise ConfigError(f"cannot parse override {item!r} (expected key=value)")
        prefix, key, value = m.groups()
        if key in GROUPS and value not in options(key):
            raise allowed(key, value, options(key))
        top = key.split(".")[0]
        if top not in TOP_KEYS:
            raise ConfigError(f"{key}: unknown config key (allowed: {', '.join(TOP_KEYS)})")
    from .engine.executor import check_overrides

    check_overrides(overrides)


def compose_config(overrides: list[str]) -> dict:
    """Compose ``conf/config.yaml`` with command-line style overrides into a plain dict."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    _precheck(overrides)
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose(config_name="config", overrides=list(overrides))
        return OmegaConf.to_container(cfg, resolve=True)
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(_one_line(str(exc))) from None


def _one_line(message: str) -> str:
    m = re.search(r"Could not override '([^']+)'", message)
    if m:
        key = m.group(1)
        parent = key.rsplit(".", 1)[0] if "." in key else ""
        return f"{key}: unknown config key" + (f" under {parent!r}" if parent else "")
    m = re.search(r"Key '([^']+)' is not in struct", message)
    if m:
        return f"{m.group(1)}: unknown config key"
    return message.strip().splitlines()[0]


def _no_duplicates(key: str, values) -> None:
    seen = set()
    for v in values:
        if v in seen:
            raise ConfigError(f"{key}: {v!r} is listed twice (each value may appear once)")
        seen.add(v)


def resolve(config: dict) -> dict:
    """Validate a composed config and add derived keys: ``n_replicates`` and ``methods``."""
    unknown = sorted(set(config) - set(TOP_KEYS))
    if unknown:
        raise ConfigError(f"{unknown[0]}: unknown config key (allowed: {', '.join(TOP_KEYS)})")
    _number("seed", config.get("seed"), integer=True, minimum=0)
    _number("block_size", config.get("block_size"), integer=True, minimum=1)
    study = config["study"]
    profile = config["profile"]["name"]
    reps = study.get("replicates", {})
    if profile not in reps:
        raise allowed("profile", profile, sorted(reps))
    _number(f"study.replicates.{profile}", reps[profile], integer=True, minimum=1)
    eps = study.get("epsilon")
    grid = eps if eps is not None else study.get("log_epsilon")
    if not grid:
        raise ConfigError("study.log_epsilon: the ε grid is empty")
    if eps is not None:
        for e in eps:
            _number("study.epsilon", e, minimum=None, open_interval=(0, math.inf))
    else:
        for x in grid:
            _number("study.log_epsilon", x)
    for axis, values in study.get("grid", {}).items():
        if not values:
            raise ConfigError(f"study.grid.{axis}: the grid axis is empty")
        _no_duplicates(f"study.grid.{axis}", values)
    _no_duplicates("study.log_epsilon", study.get("log_epsilon") or [])
    _no_duplicates("study.epsilon", study.get("epsilon") or [])
    roster = study.get("roster") or {}
    methods = config.get("methods") or list(roster)
    if isinstance(methods, str):
        methods = [methods]
    _no_duplicates("methods", methods)
    for label in methods:
        if label not in roster:
            raise allowed("methods", label, list(roster))
    from .engine.executor import validate as validate_executor

    validate_executor(config["executor"])
    out = dict(config, n_replicates=int(reps[profile]), methods=list(methods))
    out["sweep"] = config.get("sweep") or profile
    return out


def load(overrides: list[str]) -> dict:
    """Compose, validate and build the study once, so every study-level error surfaces now."""
    return validate(compose_config(overrides))


def validate(composed: dict) -> dict:
    """Validate a composed config (``compose_config``, or the config Hydra gives a multirun job)
    and build the study once, so every study-level error surfaces now."""
    from .engine.study import load_study

    config = resolve(composed)
    study = load_study(config["study"])
    extra = set(config["study"]) - set(study.COMMON_KEYS) - set(study.extra_keys)
    if extra:
        allowed_keys = ", ".join(study.COMMON_KEYS + study.extra_keys)
        raise ConfigError(f"study.{sorted(extra)[0]}: unknown config key (allowed: {allowed_keys})")
    from .engine.grid import expand_grid

    first = expand_grid(study.grid_axes())[0]
    for label in config["methods"]:
        study.method(label, first)  # construct every method once: surfaces bad parameters
    return config
