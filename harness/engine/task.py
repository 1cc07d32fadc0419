"""The run of one task (DESIGN §4): draw the block's original data from the shared data
stream, release it with one method at every ε of the grid (or once, for non-private
baselines), analyse every released set, pool the m sets, and return one row per
(replicate, ε, estimand), plus the release diagnostics: one row per (replicate, ε,
diagnostic), with diagnostics given per set averaged over the m sets, and the study's optional
per-replicate metrics: one row per (replicate, ε, metric) (DESIGN §4)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import rng as rng_mod
from ..inference import combine
from .grid import Task, scenario_key


@dataclass
class TaskResult:
    rows: pd.DataFrame
    diagnostics: pd.DataFrame  # empty when the method reports none
    metrics: pd.DataFrame = field(default_factory=pd.DataFrame)  # Study.replicate_metrics


def run_task(study, task: Task, config: dict) -> TaskResult:
    scenario = task.scenario_dict
    skey = scenario_key(scenario)
    seed = config["seed"]
    data = study.generate(
        scenario, rng_mod.data_stream(seed, study.name, skey, task.block), task.n_replicates
    )
    synth = study.method(task.method, scenario)
    truths = study.estimands(scenario)
    epsilons = study.epsilons() if synth.private else [None]
    frames, diag_frames, metric_frames = [], [], []
    prepared = None
    if getattr(synth, "uses_prepare", False):  # ε-free stage, once per task (its own stream)
        prepared = synth.prepare(
            data, rng_mod.prepare_stream(seed, study.name, skey, task.block, task.method)
        )
    for eps in epsilons:
        stream = rng_mod.method_stream(seed, study.name, skey, task.block, task.method, eps)
        if prepared is None:
            release = synth.release(data, eps, stream)
        else:
            release = synth.release(data, eps, stream, prepared=prepared)
        est, var = study.analyse(release.sets, scenario)
        pooled = combine(est, var, rule=study.config.get("combining_rule", "partial"))
        usable = study.usable(release, pooled)
        frames.append(
            _rows(study, task, scenario, eps, truths, pooled, usable, release.m)
        )
        if release.diagnostics:
            diag_frames.append(_diagnostics(study, task, scenario, eps, release.diagnostics))
        replicate_metrics = study.replicate_metrics(release, scenario)
        if replicate_metrics:
            metric_frames.append(
                _diagnostics(study, task, scenario, eps, replicate_metrics, column="metric")
            )
    out = pd.concat(frames, ignore_index=True)
    diag = pd.concat(diag_frames, ignore_index=True) if diag_frames else pd.DataFrame()
    metrics = pd.concat(metric_frames, ignore_index=True) if metric_frames else pd.DataFrame()
    return TaskResult(out, diag, metrics)


def _keys(study, task, scenario, eps) -> dict:
    return {
        "study": study.name,
        "scenario": scenario_key(scenario),
        **dict(scenario),
        "method": task.method,
        "epsilon": np.nan if eps is None else float(eps),
        "log_epsilon": np.nan if eps is None else study.log_epsilon_of(eps),
    }


def _diagnostics(study, task, scenario, eps, diagnostics: dict, column="diagnostic"):
    """Long rows (keys, replicate, ``column``, value) of per-replicate or per-set values."""
    first = task.block * task.block_size
    parts = []
    for name, values in diagnostics.items():
        v = np.asarray(values, dtype=float)
        v = v.reshape(v.shape[0], -1).mean(axis=1)  # per set -> share over the m sets
        parts.append(
            pd.DataFrame(
                {
                    **_keys(study, task, scenario, eps),
                    "replicate": np.arange(first, first + v.size, dtype=np.int64),
                    column: name,
                    "value": v,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _rows(study, task, scenario, eps, truths, pooled, usable, m) -> pd.DataFrame:
    r, e = pooled.estimate.shape
    names = list(truths)
    if len(names) != e:
        raise ValueError(f"analysis returned {e} estimands, study declares {len(names)}")
    first = task.block * task.block_size
    cols = {
        **_keys(study, task, scenario, eps),
        "estimand": np.tile(np.asarray(names, dtype=object), r),
        "truth": np.tile(np.asarray([truths[k] for k in names], dtype=float), r),
        "replicate": np.repeat(np.arange(first, first + r, dtype=np.int64), e),
        "estimate": pooled.estimate.ravel(),
        "variance": pooled.variance.ravel(),
        "df": pooled.df.ravel(),
        "ci_low": pooled.ci_low.ravel(),
        "ci_high": pooled.ci_high.ravel(),
        "between": pooled.between.ravel(),
        "within": pooled.within.ravel(),
        "m": np.int16(m),
        "usable": np.asarray(usable, dtype=bool).ravel(),
    }
    n = r * e
    return pd.DataFrame({k: (np.repeat(v, n) if np.ndim(v) == 0 else v) for k, v in cols.items()})
