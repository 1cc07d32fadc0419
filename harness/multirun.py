"""``harness -m [run] key=a,b ... [hydra/launcher=slurm]``: sweep config variants.

Comma-separated values (and ``range(...)``) expand into variants with the semantics of Hydra's
basic sweeper: the cartesian product over the swept keys, the last override of a key winning.
Every variant is composed and validated up front, in this process, with the one-line errors of
``harness run``; nothing is launched or written if one of them is invalid.

The variants then go through Hydra's multirun machinery (``hydra.main``, used only here), so
any Hydra launcher runs them: the basic launcher runs them one after the other in this process,
``hydra/launcher=slurm`` (``conf/hydra/launcher/slurm.yaml``, the submitit launcher of the
``slurm`` extra) submits one Slurm job per variant. Each job validates its composed config again
and runs the ordinary sweep of ``harness run`` (resumable, one parquet file per task) with the
configured executor.

Each variant writes to its own sweep directory ``<out_dir>/<study>/<sweep>``: unless ``sweep`` is
given, the sweep name is the profile followed by the swept overrides, e.g.
``ci+block_size-50+study.grid.n-40``; two variants that would share a directory are an error.
Hydra's own bookkeeping (configs, logs, submitit logs) goes to
``<out_dir>/multirun/<date>_<time>/`` unless ``hydra.sweep.dir`` is given.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from collections import OrderedDict
from pathlib import Path

from hydra.errors import CompactHydraException

from .errors import ConfigError, allowed

INSTALL_SLURM = 'pip install -e ".[slurm]"'
#: launchers that need the hydra-submitit-launcher plugin
SUBMITIT_LAUNCHERS = ("slurm", "submitit_slurm", "submitit_local")
#: keys that already name a variant's directory: never part of its sweep-name suffix
_DIR_KEYS = ("study", "sweep", "out_dir")


class VariantFailed(CompactHydraException):
    """A variant's sweep finished with failed tasks (reported by Hydra as one line)."""


def _is_hydra(arg: str) -> bool:
    key = arg.split("=", 1)[0].lstrip("+~")
    return key == "hydra" or key.startswith(("hydra/", "hydra."))


def _parse(overrides: list[str]) -> list:
    from .config import parse_overrides

    return parse_overrides(list(overrides))


def expand(overrides: list[str]) -> tuple[list[list[str]], list[str]]:
    """The variants (lists of plain overrides) and the swept keys, as Hydra's basic sweeper
    expands ``overrides``."""
    import itertools

    choices: OrderedDict[str, list[str]] = OrderedDict()
    swept: dict[str, str] = {}
    for o in _parse(overrides):
        key = o.get_key_element()
        if o.is_sweep_override():
            if not o.is_discrete_sweep():
                raise ConfigError(f"{o.input_line}: only lists (a,b) and range() can be swept")
            try:
                values = list(o.sweep_string_iterator())
            except Exception:  # noqa: BLE001 - glob() needs the config repository
                raise ConfigError(f"{o.input_line}: list the values to sweep (a,b,c)") from None
            choices[key] = [f"{key}={v}" for v in values]
            swept[key] = o.key_or_group
        else:
            choices[key] = [f"{key}={o.get_value_element_as_str()}"]
            swept.pop(key, None)
    variants = [list(v) for v in itertools.product(*choices.values())]
    return variants, sorted(set(swept.values()))


def _clean(value: str) -> str:
    """A value as a piece of a directory name that needs no quoting on the command line."""
    value = re.sub(r"[\[\]{}()'\" ]", "", value)
    return re.sub(r"[^A-Za-z0-9._+-]", "_", value)


def sweep_name(cfg: dict, overrides: list[str], swept: list[str]) -> str:
    """The variant's sweep name: ``sweep`` if given, else the profile name, followed by the
    swept overrides that do not already name its directory."""
    parsed = _parse(overrides)
    given = any(o.key_or_group == "sweep" for o in parsed)
    skip = set(_DIR_KEYS) | (set() if given else {"profile"})
    base = cfg.get("sweep") or cfg["profile"]["name"]
    parts = sorted(f"+{o.key_or_group}-{_clean(o.get_value_element_as_str())}"
                   for o in parsed if o.key_or_group in swept and o.key_or_group not in skip)
    return base + "".join(parts)


def plan(overrides: list[str]) -> tuple[list[dict], list[str]]:
    """Expand and validate every variant; returns their configs (sweep names set) and the swept
    keys. Raises a one-line ConfigError naming the first invalid variant."""
    from . import config
    from .engine.sweep import sweep_dir

    variants, swept = expand(overrides)
    configs, dirs = [], {}
    for i, variant in enumerate(variants):
        label = " ".join(v for v in variant if v.split("=", 1)[0].lstrip("+~") in swept)
        try:
            cfg = config.load(variant)
        except ConfigError as exc:
            where = f"variant {i + 1} of {len(variants)}" + (f" ({label})" if label else "")
            raise ConfigError(f"{where}: {exc}") from None
        cfg = dict(cfg, sweep=sweep_name(cfg, variant, swept))
        root = sweep_dir(cfg)
        if root in dirs:
            raise ConfigError(
                f"sweep: variants {dirs[root] + 1} and {i + 1} would both write to {root}; "
                f"give them distinct sweep names (e.g. sweep=a,b) or out_dirs"
            )
        dirs[root] = i
        configs.append(cfg)
    return configs, swept


def _launcher(hydra_args: list[str]) -> str:
    launcher = "basic"
    for arg in hydra_args:
        key, _, value = arg.partition("=")
        if key.lstrip("+~") == "hydra/launcher":
            launcher = value
    if launcher in SUBMITIT_LAUNCHERS:
        try:
            import hydra_plugins.hydra_submitit_launcher  # noqa: F401
        except ImportError:
            raise ConfigError(f"hydra/launcher={launcher}: the submitit launcher is not "
                              f"installed; install it with {INSTALL_SLURM}") from None
    choices = launchers()
    if launcher not in choices:
        raise allowed("hydra/launcher", launcher, choices)
    if launcher in ("slurm", "submitit_slurm") and shutil.which("sbatch") is None:
        raise ConfigError(f"hydra/launcher={launcher}: sbatch is not on PATH; submit from a "
                          f"Slurm login node (or use hydra/launcher=submitit_local to try it)")
    return launcher


def launchers() -> list[str]:
    """Hydra launchers: those of installed plugins and ``conf/hydra/launcher/*.yaml``."""
    from hydra.core.config_store import ConfigStore
    from hydra.core.plugins import Plugins

    from .config import CONF_DIR

    Plugins.instance()  # discovers plugins, which register their launcher configs
    names = {Path(n).stem for n in ConfigStore.instance().repo["hydra"]["launcher"]}
    names |= {p.stem for p in (CONF_DIR / "hydra" / "launcher").glob("*.yaml")}
    return sorted(names)


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def run_variants(argv: list[str]) -> int:
    """``harness -m``: validate every variant, then launch them through Hydra."""
    positional = [a for a in argv if "=" not in a]
    if positional:
        raise ConfigError(f"-m: unexpected argument {positional[0]!r} (expected key=value or "
                          f"key=a,b to sweep)")
    hydra_args = [a for a in argv if _is_hydra(a)]
    app_args = [a for a in argv if not _is_hydra(a)]
    configs, swept = plan(app_args)
    _launcher(hydra_args)
    excluded = ",".join(_excluded(app_args, swept))
    extra = [f"hydra.job.config.override_dirname.exclude_keys=[{excluded}]",
             "hydra.job.name=harness"]
    if not any(a.split("=", 1)[0].lstrip("+~") == "hydra.sweep.dir" for a in hydra_args):
        where = Path(configs[0]["out_dir"]) / "multirun" / time.strftime("%Y-%m-%d_%H-%M-%S")
        extra.append(f"hydra.sweep.dir={_quote(str(where))}")
    return _hydra_multirun([*app_args, *extra, *hydra_args])


def _excluded(app_args: list[str], swept: list[str]) -> list[str]:
    """Keys that are not swept: Hydra's override_dirname (and the job's sweep name) omit them."""
    keys = {o.key_or_group for o in _parse(app_args)} - set(swept)
    return [_quote(k) for k in sorted(keys)]


def _hydra_multirun(overrides: list[str]) -> int:
    """Run Hydra's multirun (sweeper and launcher) over ``overrides`` with :func:`job`."""
    import hydra
    from hydra.core.global_hydra import GlobalHydra

    from .config import CONF_DIR

    entry = hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")(job)
    saved = sys.argv
    sys.argv = [saved[0] if saved else "harness", "--multirun", *overrides]
    try:
        entry()
    except SystemExit as exc:  # Hydra reports a failed job on one line and exits 1
        return exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = saved
        GlobalHydra.instance().clear()
    return 0


def job(cfg) -> int:
    """One variant, in a Hydra job (this process, or a Slurm job): validate the composed config
    and run its sweep like ``harness run``."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    from . import config
    from .outputs import run_config

    hc = HydraConfig.get()
    overrides = list(hc.overrides.task)
    excluded = set(hc.job.config.override_dirname.exclude_keys)
    swept = sorted({o.key_or_group for o in _parse(overrides)} - excluded)
    composed = OmegaConf.to_container(cfg, resolve=True)
    checked = config.validate(composed)
    run_cfg = dict(checked, sweep=sweep_name(checked, overrides, swept))
    # the variant's own overrides and sweep directory, for the hint to its claims' details
    own = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") != "sweep"]
    status = run_config(run_cfg, [*own, f"sweep={run_cfg['sweep']}"])
    sys.stdout.flush()
    if status:
        from .engine.sweep import sweep_dir

        raise VariantFailed(f"{sweep_dir(run_cfg)}: some tasks failed (see failures.jsonl there; "
                            f"re-run one with harness replay '<task key>')")
    return status
