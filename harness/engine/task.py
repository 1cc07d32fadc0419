"""The run of one task: draw the block's original data (with its parts) from the
shared data stream, fit the method's privacy-free stage once, release the data with the method
at every value of the study's privacy axis (once, for non-private baselines), run every
evaluation of the release for each number of pooled sets m (nested m), and return

* interval rows: one per (replicate, privacy value, m, estimand), pooled by the evaluation's
  combining rule;
* metric rows: one per (replicate, privacy value, m, metric), from metric evaluations and from
  the metrics an interval analysis reports beside its estimates;
* diagnostic rows: one per (replicate, privacy value, diagnostic), per-set values averaged over
  the sets.

Every row carries the swept privacy value (``privacy``) and the realised ε of the sets it
pools (``epsilon``, from the release's ledger; ``log_epsilon`` its logarithm), so methods are
compared at equal realised ε whatever the axis, and the neighbour relation and δ of that ε
(``relation``, ``delta``: :func:`privacy_keys`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import rng as rng_mod
from ..data import Original
from ..evaluation import IntervalEvaluation, per_replicate
from .grid import Task, scenario_key


@dataclass
class TaskResult:
    rows: pd.DataFrame
    diagnostics: pd.DataFrame  # empty when the method reports none
    metrics: pd.DataFrame = field(default_factory=pd.DataFrame)  # metric rows


def run_task(study, task: Task, config: dict) -> TaskResult:
    scenario = task.scenario_dict
    skey = scenario_key(scenario)
    seed = config["seed"]
    original = Original.of(_generate(study, scenario, skey, seed, task))
    synth = study.synthesizer(task.method, scenario)
    evaluations = study.evaluations_for(task.method)
    values = study.privacy_values() if synth.private else [None]
    frames, diag_frames, metric_frames = [], [], []
    kwargs = {}
    if synth.needs_parts:
        kwargs["parts"] = original.parts
    if getattr(synth, "uses_prepare", False):  # ε-free stage, once per task (its own stream)
        kwargs["prepared"] = synth.prepare(
            original.train,
            rng_mod.prepare_stream(seed, study.name, skey, task.block, task.method),
            **kwargs,
        )
    for value in values:
        stream = rng_mod.method_stream(seed, study.name, skey, task.block, task.method, value)
        release = synth.release(original.train, value, stream, **kwargs)
        sizes = study.pool_sizes(task.method, release.m)
        keys = {m: _keys(study, task, scenario, value, release, m) for m in sizes}
        for ev in evaluations:
            if isinstance(ev, IntervalEvaluation):
                out = ev.output(original, release, scenario)
                truths = ev.estimands(scenario)
                for m in sizes:
                    pooled, usable = ev.pool(out, release, m)
                    frames.append(_interval_rows(task, keys[m], truths, pooled, usable))
                    if out.metrics:
                        metric_frames.append(_long(task, keys[m], out.metrics, "metric", m))
                if out.diagnostics:
                    diag_frames.append(_long(task, keys[release.m], out.diagnostics,
                                             "diagnostic"))
            else:
                for m in sizes:
                    metrics = ev.metrics(original, release.first_sets(m), scenario)
                    metric_frames.append(_long(task, keys[m], metrics, "metric"))
        if release.diagnostics:
            diag_frames.append(_long(task, keys[release.m], release.diagnostics, "diagnostic"))
    return TaskResult(_concat(frames), _concat(diag_frames), _concat(metric_frames))


#: the original data of the last block drawn in this process. A sweep in one process runs a
#: block's methods one after another (scenario, block, then method), and each task would draw
#: the same block again from the same data stream; it gets a copy of this draw instead (the
#: same values: the stream is a function of (seed, study, scenario, block) only, DESIGN §5)
_LAST_DRAW: dict = {}


def _generate(study, scenario: dict, skey: str, seed: int, task: Task):
    """``study.generate`` on the block's data stream, or a deep copy of the previous task's
    draw when that task drew the same block of the same study object (a copy, so that a
    method that writes into its input cannot reach the next method's data)."""
    key = (seed, skey, task.block, task.n_replicates)
    last = _LAST_DRAW.get("draw")
    if last is not None and last[0] is study and last[1] == key:
        return copy.deepcopy(last[2])
    data = study.generate(scenario, rng_mod.data_stream(seed, study.name, skey, task.block),
                          task.n_replicates)
    _LAST_DRAW["draw"] = (study, key, copy.deepcopy(data))
    return data


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _keys(study, task, scenario, value, release, m) -> dict:
    epsilon = release.realised_epsilon(m)
    return {
        "study": study.name,
        "scenario": scenario_key(scenario),
        **dict(scenario),
        "method": task.method,
        "privacy": np.nan if value is None else float(value),
        "epsilon": np.nan if epsilon is None else float(epsilon),
        "log_epsilon": np.nan if epsilon is None else study.log_epsilon_of(epsilon),
        "m": np.int16(m),
        **privacy_keys(release, m),
    }


def privacy_keys(release, m: int) -> dict:
    """The neighbour relation of the release's ledger (``relation``; "" for a non-private
    release, which spends nothing) and the composed δ of its first ``m`` sets (``delta``: 0 for
    pure ε-DP methods; NaN for a non-private release), so that rows at equal ε compare at equal
    privacy (issue 24 item 3)."""
    if release.privacy is None:
        return {"relation": "", "delta": np.nan}
    return {"relation": release.ledger.relation,
            "delta": float(release.ledger.first_sets(m).total_delta())}


def _long(task, keys: dict, values: dict, column: str, m: int | None = None) -> pd.DataFrame:
    """Long rows (keys, replicate, ``column``, value) of per-replicate values, or of per-set
    values averaged over the first ``m`` sets (all sets when None)."""
    first = task.block * task.block_size
    parts = []
    for name, v in values.items():
        v = per_replicate(v, m)
        parts.append(pd.DataFrame({
            **keys,
            "replicate": np.arange(first, first + v.size, dtype=np.int64),
            column: name,
            "value": v,
        }))
    return pd.concat(parts, ignore_index=True)


def _interval_rows(task, keys: dict, truths: dict, pooled, usable) -> pd.DataFrame:
    r, e = pooled.estimate.shape
    names = list(truths)
    if len(names) != e:
        raise ValueError(f"analysis returned {e} estimands, the evaluation declares {len(names)}")
    first = task.block * task.block_size
    cols = {
        **keys,
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
        "usable": np.asarray(usable, dtype=bool).ravel(),
    }
    n = r * e
    return pd.DataFrame({k: (np.repeat(v, n) if np.ndim(v) == 0 else v) for k, v in cols.items()})
