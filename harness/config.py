"""Configuration: Hydra 1.3 composition (``conf/``) and validation.

Everything is validated before anything is written. Problems raise :class:`ConfigError` with a
one-line message that names the key and the allowed values.
"""

from __future__ import annotations

import copy
import math
import os
import re
from pathlib import Path

import yaml

from .errors import ConfigError, allowed
from .validation import check_number as _number

CONF_DIR = Path(os.environ.get("HARNESS_CONF", Path(__file__).resolve().parents[1] / "conf"))
GROUPS = ("study", "profile", "executor")
#: replicates per task unless the command line or the study sets ``block_size``
DEFAULT_BLOCK_SIZE = 500
TOP_KEYS = (
    "study", "profile", "executor", "seed", "out_dir", "sweep", "block_size", "methods",
    "figures_dir",
)


def options(group: str) -> list[str]:
    """The choices of a config group: the files of ``conf/<group>/``, and for ``study`` the
    studies of installed plug-ins (harness/plugins.py)."""
    names = {p.stem for p in (CONF_DIR / group).glob("*.yaml")}
    if group == "study":
        from .plugins import study_names

        names |= set(study_names())
    return sorted(names)


def parse_overrides(overrides: list[str]) -> list:
    """Hydra's parsed overrides, or one line naming the key whose value Hydra's grammar cannot
    parse (an unclosed bracket or quote), instead of Hydra's message that names no key."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parser, parsed = OverridesParser.create(), []
    for item in overrides:
        try:
            parsed += parser.parse_overrides([item])
        except HydraException as exc:
            key, _, value = item.partition("=")
            reason = next((s.strip() for s in str(exc).splitlines() if s.strip()), "")
            raise ConfigError(f"{key.lstrip('+~')}: cannot parse the value {value!r} ({reason}; "
                              f"allowed: a value, a list [a,b] or a mapping {{k: v}} with "
                              f"closed brackets and quotes)") from None
    return parsed


def _precheck(overrides: list[str]) -> None:
    for item in overrides:
        m = re.fullmatch(r"([+~]{0,2})([\w.\-/]+)=(.*)", item)
        if not m:
            raise ConfigError(f"cannot parse override {item!r} (expected key=value)")
        prefix, key, value = m.groups()
        if key == "study":
            from .plugins import require_study

            require_study(value)
        if key in GROUPS and value not in options(key):
            raise allowed(key, value, options(key))
        top = key.split(".")[0]
        if top not in TOP_KEYS:
            raise ConfigError(f"{key}: unknown config key (allowed: {', '.join(TOP_KEYS)})")
    parse_overrides(overrides)
    from .engine.executor import check_overrides

    check_overrides(overrides, default=_default_executor)


def _default_executor() -> str:
    """The executor that ``conf/config.yaml``'s defaults list chooses."""
    from omegaconf import OmegaConf

    try:
        defaults = OmegaConf.load(CONF_DIR / "config.yaml").get("defaults", [])
    except yaml.YAMLError as exc:
        raise yaml_error(exc) from None
    for item in defaults:
        if OmegaConf.is_dict(item) and "executor" in item:
            return str(item["executor"])
    return "local"


def compose_config(overrides: list[str]) -> dict:
    """Compose ``conf/config.yaml`` with command-line style overrides into a plain dict."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    _precheck(overrides)
    from .plugins import study_conf_dirs

    extra = study_conf_dirs()  # studies of installed plug-ins
    key = (tuple(overrides), tuple(extra))
    stamp = _files_stamp([CONF_DIR, *extra])
    cached = _COMPOSED.get(key)
    if cached is not None and cached[0] == stamp:
        return copy.deepcopy(cached[1])
    search = ([f"hydra.searchpath=[{','.join(p.resolve().as_uri() for p in extra)}]"]
              if extra else [])
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose(config_name="config", overrides=[*search, *overrides])
        composed = OmegaConf.to_container(cfg, resolve=True)
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(_one_line(str(exc))) from None
    except yaml.YAMLError as exc:
        raise yaml_error(exc) from None
    if not any("${" in o for o in overrides):  # an interpolation may read the environment
        if len(_COMPOSED) >= COMPOSED_CACHE_SIZE:
            _COMPOSED.pop(next(iter(_COMPOSED)))
        _COMPOSED[key] = (stamp, copy.deepcopy(composed))
    return composed


#: compositions of this process (Hydra's compose costs ~0.2 s; a report, a benchmark or a test
#: session composes the same overrides many times), keyed by the overrides and the plug-ins'
#: conf folders and valid while no file under those folders or conf/ changed (name, size and
#: modification time of every file)
_COMPOSED: dict = {}
COMPOSED_CACHE_SIZE = 256


def _files_stamp(folders) -> tuple:
    stamp = []
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                st = os.stat(os.path.join(root, name))
                stamp.append((root, name, st.st_size, st.st_mtime_ns))
    return tuple(stamp)


def yaml_error(exc) -> ConfigError:
    """One line naming the file and line of a YAML syntax error (PyYAML's marked errors)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).strip().splitlines()[0]
    if mark is None:
        return ConfigError(f"cannot parse YAML ({problem})")
    return ConfigError(f"{mark.name}:{mark.line + 1}: cannot parse YAML ({problem})")


def _one_line(message: str) -> str:
    m = re.search(r"Could not override '([^']+)'", message)
    if m:
        key = m.group(1)
        parent = key.rsplit(".", 1)[0] if "." in key else ""
        line = f"{key}: unknown config key" + (f" under {parent!r}" if parent else "")
        parts = key.split(".")
        if parts[:2] == ["study", "roster"] and len(parts) > 4:  # e.g. a label with a dot
            label, rest = ".".join(parts[2:-1]), parts[-1]
            line += (f" (a roster label with a dot is set as 'study.roster={{{label}:"
                     f"{{{rest}:...}}}}')")
        return line
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


def _as_list(key: str, value, example: str) -> list:
    """A list-valued key given a scalar (``study.grid.n=40``) is a one-line error."""
    if not isinstance(value, list):
        raise ConfigError(f"{key}: must be a list of values, e.g. {key}={example}, "
                          f"got {value!r}")
    return value


#: ln ε such that ε = e^x is a normal, finite double with room for a noise scale Δ/ε
LOG_EPSILON_RANGE = (-700.0, 700.0)


def _epsilon_grid(study: dict) -> None:
    """The privacy grid: ``study.privacy_values`` or ``study.log_privacy_values`` (any privacy
    axis), or for the ε axis ``study.epsilon`` or ``study.log_epsilon``: a non-empty list of
    numbers whose values are finite and > 0, checked on the values the grid produces, not only
    on the numbers typed (ln ε = 800 would overflow to ε = inf)."""
    axis = study.get("privacy_axis") or "epsilon"
    generic = study.get("privacy_values") is not None or \
        study.get("log_privacy_values") is not None
    if generic or axis != "epsilon":
        values_key, logs_key, name = "privacy_values", "log_privacy_values", axis
    else:
        values_key, logs_key, name = "epsilon", "log_epsilon", "ε"
    eps = study.get(values_key)
    if eps is not None:
        key = f"study.{values_key}"
        for e in _as_list(key, eps, "[0.5,1,2]"):
            _number(key, e, minimum=None, open_interval=(0, math.inf))
        if not eps:
            raise ConfigError(f"{key}: the {name} grid is empty (give at least one value > 0)")
        _no_duplicates(key, eps)
        return
    key = f"study.{logs_key}"
    if study.get(logs_key) is None and logs_key == "log_privacy_values":
        raise ConfigError(f"study.privacy_values: the {name} grid is missing (give "
                          f"privacy_values or log_privacy_values)")
    grid = _as_list(key, study.get(logs_key), "[-1,0,1]")
    if not grid:
        raise ConfigError(f"{key}: the {name} grid is empty (give at least one logarithm)")
    lo, hi = LOG_EPSILON_RANGE
    for x in grid:
        _number(key, x)
        if not lo <= x <= hi:
            raise ConfigError(f"{key}: {x!r} gives {name} = e^{x!r}, which is not a "
                              f"usable number (allowed: logarithms in [{lo:g}, {hi:g}])")
    _no_duplicates(key, grid)


#: a sweep name is one directory name (multirun names sweeps like ``n=[40],pi=0.1``)
_SWEEP_NAME = re.compile(r"[\w.=,+\-\[\]]+")


def _paths(config: dict) -> None:
    out_dir, sweep = config.get("out_dir"), config.get("sweep")
    if not isinstance(out_dir, str) or not out_dir.strip():
        raise ConfigError(f"out_dir: must be a directory path, got {out_dir!r}")
    if sweep is not None and (not isinstance(sweep, str) or sweep in (".", "..")
                              or not _SWEEP_NAME.fullmatch(sweep)):
        raise ConfigError(f"sweep: {sweep!r} is not a sweep name (one directory name of "
                          f"letters, digits and . _ - = , + [ ]; no '/', '.' or '..')")
    figures = config.get("figures_dir")
    if figures is not None and (not isinstance(figures, str) or not figures.strip()):
        raise ConfigError(f"figures_dir: must be a directory path or null, got {figures!r}")


def writable(path: Path) -> bool:
    """Whether this process may create entries in the existing directory ``path`` (a small
    named function so that tests can stand in for permissions that root does not have)."""
    return os.access(path, os.W_OK | os.X_OK)


def check_writable_dir(key: str, path: Path) -> None:
    """One-line error unless ``path`` is, or can be made as, a directory: no file on its way,
    and its deepest existing ancestor writable. Nothing is created."""
    path = Path(path)
    for part in (path, *path.parents):
        if part.exists():
            if not part.is_dir():
                raise ConfigError(f"{key}: {part} is a file, not a directory (give another "
                                  f"{key}, or move the file)")
            if not writable(part):
                raise ConfigError(f"{key}: cannot write to {part} (permission denied); give "
                                  f"another {key}")
            return


def resolve(config: dict) -> dict:
    """Validate a composed config and add derived keys: ``n_replicates`` and ``methods``."""
    unknown = sorted(set(config) - set(TOP_KEYS))
    if unknown:
        raise ConfigError(f"{unknown[0]}: unknown config key (allowed: {', '.join(TOP_KEYS)})")
    _number("seed", config.get("seed"), integer=True, minimum=0)
    _paths(config)
    study = config["study"]
    key, block_size = "block_size", config.get("block_size")
    if block_size is None:
        key, block_size = "study.block_size", study.get("block_size", DEFAULT_BLOCK_SIZE)
    _number(key, block_size, integer=True, minimum=1)
    profile = config["profile"]["name"]
    reps = study.get("replicates", {})
    if profile not in reps:
        raise allowed("profile", profile, sorted(reps))
    _number(f"study.replicates.{profile}", reps[profile], integer=True, minimum=1)
    _epsilon_grid(study)
    if study.get("relation") is not None:
        from .privacy.ledger import RELATIONS

        if study["relation"] not in RELATIONS:
            raise allowed("study.relation", study["relation"], RELATIONS)
    if study.get("delta") is not None:
        _number("study.delta", study["delta"], open_interval=(0, 1))
    grid = study.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise ConfigError(f"study.grid: must map each grid axis to a list of values, got {grid!r}")
    for axis, values in grid.items():
        _as_list(f"study.grid.{axis}", values, "[40,100]")
        if not values:
            raise ConfigError(f"study.grid.{axis}: the grid axis is empty")
        _no_duplicates(f"study.grid.{axis}", values)
    roster = study.get("roster") or {}
    methods = config.get("methods")
    if methods is None:
        methods = list(roster)
    if isinstance(methods, str):
        methods = [methods]
    if not methods:
        raise ConfigError(f"methods: the list is empty; give methods=null for the whole roster "
                          f"or a subset (allowed: {', '.join(roster)})")
    _no_duplicates("methods", methods)
    for label in methods:
        if label not in roster:
            raise allowed("methods", label, list(roster))
    from .engine.executor import validate as validate_executor

    validate_executor(config["executor"])
    out = dict(config, n_replicates=int(reps[profile]), methods=list(methods),
               block_size=int(block_size))
    out["sweep"] = config.get("sweep") or profile
    sweep = Path(out["out_dir"]) / study["name"] / out["sweep"]
    check_writable_dir("out_dir", sweep)
    if out.get("figures_dir"):
        check_writable_dir("figures_dir", Path(out["figures_dir"]))
    return out


def load(overrides: list[str]) -> dict:
    """Compose, validate and build the study once, so every study-level error surfaces now."""
    return validate(compose_config(overrides))


def validate(composed: dict) -> dict:
    """Validate a composed config (``compose_config``, or the config Hydra gives a multirun job)
    and build the study once, so every study-level error surfaces now."""
    from .datafiles import select_data_files
    from .engine.study import load_study, study_class

    config = resolve(composed)
    select_data_files(study_class(config["study"]), config["study"])
    study = load_study(config["study"])
    extra = set(config["study"]) - set(study.COMMON_KEYS) - set(study.extra_keys)
    if extra:
        allowed_keys = ", ".join(study.COMMON_KEYS + study.extra_keys)
        raise ConfigError(f"study.{sorted(extra)[0]}: unknown config key (allowed: {allowed_keys})")
    from .engine.grid import expand_grid

    first = expand_grid(study.grid_axes())[0]
    # construct every method once (surfaces bad parameters) and check that the study's privacy
    # axis, evaluations, release kinds and pool sizes fit together
    study.check_contract(config["methods"], first)
    return config
