"""Grid expansion and task planning.

A scenario is one point of the study grid (ε is not part of it: ε is swept inside a task). A task
is (study, scenario, block of replicates, method); its identity hash covers everything its rows
depend on, so a re-run skips finished tasks and never reuses rows made under other settings.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass

import numpy as np


def expand_grid(axes: dict[str, list]) -> list[dict]:
    """Cartesian product of the grid axes, in the order the axes and values are given."""
    names = list(axes)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*axes.values())]


def scenario_key(scenario: dict) -> str:
    return ",".join(f"{k}={_fmt(v)}" for k, v in scenario.items())


def _fmt(v) -> str:
    if isinstance(v, np.integer):
        return str(int(v))
    return repr(float(v)) if isinstance(v, (float, np.floating)) else str(v)


def blocks(n_replicates: int, block_size: int) -> list[tuple[int, int]]:
    """(block index, replicates in the block); the last block may be short."""
    return [
        (b, min(block_size, n_replicates - b * block_size))
        for b in range((n_replicates + block_size - 1) // block_size)
    ]


@dataclass(frozen=True)
class Task:
    study: str
    scenario: tuple  # ((name, value), ...) in grid order
    block: int
    block_size: int
    n_replicates: int  # replicates in this block
    method: str
    fingerprint: str  # hash of the settings the rows depend on

    @property
    def scenario_dict(self) -> dict:
        return dict(self.scenario)

    @property
    def key(self) -> str:
        """Human-readable task key, as accepted by ``harness replay``."""
        return f"{self.study}/{scenario_key(self.scenario_dict)}/block={self.block}/{self.method}"

    @property
    def file_id(self) -> str:
        text = json.dumps([self.key, self.block_size, self.n_replicates, self.fingerprint])
        return hashlib.sha256(text.encode()).hexdigest()[:24]


def fingerprint(parts: dict) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _plugin_version(spec) -> str | None:
    """Package version and source hash of a roster entry's plug-in synthesizer, else None."""
    from ..synthesizers.registry import version

    name = spec.get("synthesizer") if isinstance(spec, dict) else None
    inner = spec.get("inner") if isinstance(spec, dict) else None
    if isinstance(inner, dict):  # the benchmark's adapter wrapping a (perhaps plug-in) method
        return _plugin_version(inner)
    return version(name) if name else None


def plan_tasks(study, config: dict, code_version: str) -> list[Task]:
    """Every task of the sweep, in a fixed order: scenario, then block, then method."""
    scfg = config["study"]
    # the benchmark's declarations make no row: its adapter's settings are in its roster entry
    shared = {k: v for k, v in scfg.items()
              if k not in ("replicates", "roster", "grid", "benchmark")}
    for k in ("relation", "delta"):  # unset (each method's own, the default δ): as before
        if shared.get(k) is None:
            shared.pop(k, None)
    from ..plugins import evaluation_versions, study_version

    study_plugin = study_version(study.name)
    evaluation_plugins = evaluation_versions(scfg.get("evaluations") or {})
    tasks = []
    n_rep = config["n_replicates"]
    for scenario in expand_grid(study.grid_axes()):
        for b, r in blocks(n_rep, config["block_size"]):
            for label in config["methods"]:
                parts = {
                    "seed": config["seed"],
                    "code": code_version,
                    "study": shared,
                    "method": scfg["roster"][label],
                }
                plugin = _plugin_version(scfg["roster"][label])
                if plugin:  # a plug-in's code is not under harness/: its version counts
                    parts["plugin"] = plugin
                if study_plugin:
                    parts["study_plugin"] = study_plugin
                if evaluation_plugins:  # their code makes metric rows too
                    parts["evaluation_plugins"] = evaluation_plugins
                fp = fingerprint(parts)
                tasks.append(
                    Task(study.name, tuple(scenario.items()), b, config["block_size"], r, label, fp)
                )
    return tasks
