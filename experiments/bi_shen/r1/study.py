"""Bi & Shen, benchmark R1 (Table 3 "UC Salary" and its appendix; spec 004 §4 R1): the private
mean of the 2010 UC salaries.

One fixed data set, as in the paper: the real salaries when ``data_csv`` names a user's file
(:func:`.data.load_salary_csv`), otherwise the calibrated Burr XII stand-in
(:func:`.data.standin_salaries`; its assumptions are labelled there). Every replicate releases
the same N records; replicates differ in the hold-out split and the noise. The metric is the
relative mean difference 100·|mean(Z̃) − Z̄|/Z̄ (%) against the full data's mean Z̄ (spec §7.3,
``rel_mean_diff_pct``; for the real data Z̄ = $39,531.49, the paper's).

Methods (spec §2, §4 R1; every constant in ``conf/study/bi_shen_r1.yaml``):

* DIP_15, DIP_25, DIP_35: the univariate DIP with the smoothed-ECDF reference of a hold-out of
  m = round(h·N) records (eq. (7)–(8)); the other n = N − m records are privatized and released;
* LRM: Laplace(Δ/ε) on every salary, Δ = max salary (the [0, max] rule, spec §2);
* OPM: Duchi et al.'s §3.2.1 mean mechanism, clip to [−T, T] plus Laplace(2T/ε), with
  T = r(Nε²)^{1/(2k)}, k = 20 and r = (mean|Z|^k)^{1/k} (spec A13: the paper's "k = 20, the
  moment closest to 3" cannot be decoded);
* OPM_T400k: the same mechanism with a fixed T = $400,000, the truncation the paper's 4.69 %
  implies (spec A13's oracle variant, tuned on the data: not a DP choice).

Memory: one replicate is N floats (2 MB) and DIP's split and sort take several such arrays, so
the study sets ``block_size`` (25 replicates per task) instead of the engine's 500."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from harness.data import Original, RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError
from harness.evaluation import MetricEvaluation
from harness.metrics.accuracy import relative_mean_difference_pct
from harness.synthesizers import make_synthesizer

from ..sources import check_csv_source, data_csv_path, source_rule
from .data import load_salary_csv, standin_salaries

HERE = Path(__file__).resolve().parent
STANDIN_KEYS = ("c", "d", "scale", "n", "seed", "maximum")


class UCSalary(Study):
    grid_rules = {"data": source_rule}
    extra_keys = ("standin", "data_csv")
    data_files = {"data_csv": "csv"}  # the path selects grid.data=[csv]

    def validate(self) -> None:
        s = self.config.get("standin") or {}
        for key in STANDIN_KEYS:
            v = s.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
                raise ConfigError(f"study.standin.{key}: must be a number > 0, got {v!r}")
        for key in ("n", "seed"):
            if not isinstance(s[key], int):
                raise ConfigError(f"study.standin.{key}: must be an integer, got {s[key]!r}")
        check_csv_source(self.config, "a salary CSV (one column, salary)", self.salaries)

    @functools.cache  # noqa: B019 (one data set per study object and source)
    def salaries(self, source: str) -> np.ndarray:
        """The (N,) salaries of ``source``: the stand-in, or the user's CSV."""
        if source == "csv":
            return load_salary_csv(data_csv_path(self.config))
        s = self.config["standin"]
        return standin_salaries(float(s["c"]), float(s["d"]), float(s["scale"]), int(s["n"]),
                                int(s["seed"]), float(s["maximum"]))

    # --- data ----------------------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        z = self.salaries(scenario["data"])
        values = np.broadcast_to(z[None, :, None], (n_replicates, z.size, 1))
        return Original(RecordBatch(values, columns=("salary",)),
                        {"full_mean": np.full(n_replicates, z.mean())})

    # --- evaluation ----------------------------------------------------------------------------
    def relative_difference(self, original, release, scenario):
        v = release.sets.values[..., 0]  # (R, M, n)
        ref = original.part("full_mean")[:, None]
        return {"rel_mean_diff_pct": relative_mean_difference_pct(v, ref)}

    def evaluations(self):
        return [MetricEvaluation("mean", self.relative_difference, names=("rel_mean_diff_pct",))]

    # --- methods -------------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = UCSalary
