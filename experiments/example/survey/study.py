"""The worked example of the README: a small survey study written only against the study
contract. It uses, together: a typed schema with a structural zero, survey weights
and strata, a hold-out part, an interval evaluation, metric evaluations that read the original
data, a model release, nested m, a privacy axis other than ε (the ε of one exponential-mechanism
draw) and the exponential mechanism.

Data-generating process. A population frame (``data/frame.csv``, checked against the schema:
every row stands for ``weight`` people) is sampled in every replicate by stratified sampling with
replacement: ``n_per_stratum`` people per stratum, each with probability proportional to its
row's weight, so each sampled person has design weight N_h / n_h. A share ``holdout_share`` of
each stratum's sample is held out (the ``holdout`` part); the rest (``train``) is released.

Evaluations.
* ``population_shares`` (intervals): the weighted share of each outcome level, with the
  stratified with-replacement variance (``stratified_proportions``); truth = the frame's shares.
* ``holdout_accuracy`` (metric; records and models): predict each held-out person's outcome by
  the (weighted) modal outcome of their stratum in the release; the share predicted right.
* ``tvd_to_original`` (metric; records): total variation distance between the weighted outcome
  distribution of each released set and that of the original training sample.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from harness.data import Original, RecordBatch, group_sums
from harness.datafiles import data_path
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.evaluation import IntervalEvaluation, MetricEvaluation
from harness.inference.estimators import stratified_proportions
from harness.schema import Schema, load_csv
from harness.synthesizers import make_synthesizer

from . import synthesizers  # noqa: F401  (registers the example's methods)
from .synthesizers import OUTCOME, STRATUM, outcome, stratum_counts

HERE = Path(__file__).resolve().parents[1]


class ExampleSurvey(Study):
    grid_rules = {"n_per_stratum": {"integer": True, "minimum": 4}}
    privacy_axes = ("epsilon_draw",)
    extra_keys = ("schema", "frame", "holdout_share")
    data_files = {"frame": None}  # null: the shipped frame, experiments/example/data/frame.csv

    # --- configuration -----------------------------------------------------------------------
    def validate(self) -> None:
        share = self.config.get("holdout_share")
        if not (isinstance(share, float) and 0 < share < 0.5):
            raise ConfigError(f"study.holdout_share: must be a number in (0, 0.5), got {share!r}")
        self.population()  # reads and checks the frame against the schema now

    @functools.cached_property
    def schema(self) -> Schema:
        schema = Schema.from_config(self.config.get("schema"), "study.schema")
        names = [c.name for c in schema.categorical]
        if names != [STRATUM, OUTCOME]:
            raise allowed("study.schema.columns", names, [f"[{STRATUM}, {OUTCOME}]"])
        return schema

    @functools.cache  # noqa: B019 (one frame per study object)
    def population(self) -> tuple[np.ndarray, np.ndarray]:
        """The frame's (codes (N_rows, p), weights (N_rows,)), checked against the schema."""
        path = data_path(self.config.get("frame"), "study.frame", HERE / "data" / "frame.csv")
        codes, weights = load_csv(path, self.schema, weight="weight", key="study.frame")
        strata = codes[:, self.schema.names.index(STRATUM)]
        for h, level in enumerate(self.levels(STRATUM)):
            if not weights[strata == h].sum() > 0:
                raise ConfigError(f"study.frame: stratum {level!r} of {path} has no row of "
                                  f"positive weight (every stratum is sampled)")
        return codes, weights

    def levels(self, column: str) -> tuple:
        return self.schema.column(column).levels

    # --- data --------------------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        codes, weights = self.population()
        n_h = int(scenario["n_per_stratum"])
        n_out = max(1, round(self.config["holdout_share"] * n_h))
        train, holdout = [], []
        for h in range(len(self.levels(STRATUM))):
            rows = np.flatnonzero(codes[:, self.schema.names.index(STRATUM)] == h)
            p = weights[rows] / weights[rows].sum()
            drawn = codes[rng.choice(rows, size=(n_replicates, n_h), p=p)]  # (R, n_h, p)
            design_weight = weights[rows].sum() / n_h
            train.append((drawn[:, n_out:], h, design_weight * n_h / (n_h - n_out)))
            holdout.append((drawn[:, :n_out], h, design_weight * n_h / n_out))
        return Original(self._batch(train), {"holdout": self._batch(holdout)})

    def _batch(self, parts) -> RecordBatch:
        values = np.concatenate([v for v, _, _ in parts], axis=1)
        strata = np.concatenate([np.full(v.shape[:2], h) for v, h, _ in parts], axis=1)
        weights = np.concatenate([np.full(v.shape[:2], w) for v, _, w in parts], axis=1)
        return RecordBatch(values, None, 1, self.schema.names, weights, strata, self.schema)

    # --- evaluations -------------------------------------------------------------------------
    def truths(self, scenario) -> dict[str, float]:
        codes, weights = self.population()
        y = codes[:, self.schema.names.index(OUTCOME)].astype(int)
        shares = np.bincount(y, weights=weights, minlength=len(self.levels(OUTCOME)))
        return {f"share_{lv}": float(s) for lv, s in
                zip(self.levels(OUTCOME), shares / weights.sum(), strict=True)}

    def shares(self, original, release, scenario):
        sets = release.sets
        return stratified_proportions(outcome(sets), sets.weights, sets.strata,
                                      len(self.levels(STRATUM)), len(self.levels(OUTCOME)))

    def holdout_accuracy(self, original, release, scenario):
        holdout = original.part("holdout")
        if release.kind == "model":
            pred = release.sets.predict(holdout.strata)
        else:
            labels = weighted_modes(release.sets)  # (R, m, H)
            pred = np.take_along_axis(labels, holdout.strata[:, None].astype(np.int64), -1)
        right = pred == outcome(holdout)[:, None]
        return {"holdout_accuracy": right.mean(axis=-1)}  # per set (R, m)

    def tvd(self, original, release, scenario):
        k = len(self.levels(OUTCOME))
        return {"tvd_to_original": 0.5 * np.abs(
            weighted_distribution(release.sets, k)
            - weighted_distribution(original.train, k)[:, None]).sum(axis=-1)}

    def evaluations(self):
        return [
            IntervalEvaluation("population_shares", self.truths, self.shares,
                               self.config.get("combining_rule") or "partial"),
            MetricEvaluation("holdout_accuracy", self.holdout_accuracy,
                             kinds=("records", "model"), names=("holdout_accuracy",)),
            MetricEvaluation("tvd_to_original", self.tvd, names=("tvd_to_original",)),
        ]

    # --- methods -----------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


def weighted_distribution(batch: RecordBatch, n_levels: int) -> np.ndarray:
    """Weighted outcome distribution (..., K) of every data set of a batch."""
    w = group_sums(batch.weights, outcome(batch), n_levels)
    return w / w.sum(axis=-1, keepdims=True)


def weighted_modes(batch: RecordBatch) -> np.ndarray:
    """The modal outcome (..., H) of every stratum of every data set (ties: the first level;
    every record of a stratum has the same weight, so counts decide)."""
    return stratum_counts(batch).argmax(axis=-1)


STUDY_CLASS = ExampleSurvey
