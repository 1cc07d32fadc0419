"""Park & Ghosh §4.3–4.4: risk–utility maps of PeGS, PeGS.rs and PMI (spec 001 E2–E5).

Per replicate, an original data set of ``n`` discharge records (the stand-in generator of spec
§2.2, or a user's CSV of the same schema) is released by every method of the roster as 1000
synthetic records at each ε per synthetic sample (the paper's grid {0.1, 0.5, 1, 5, 10, 50,
100}; §4.3). The paper draws one data set per cell; the harness draws R replicates and reports
their mean with its Monte Carlo SE (spec §5 item 12).

Hash structure. The paper orders each feature's conditioning features by their mutual
information with it in D (§3.2). An order read from the data being released is not covered by
PeGS's ε guarantee (spec §1.4; harness/synthesizers/pegs.py refuses it), so the study draws a
second, independent stand-in sample as a ``public`` part (``n_public`` records, e.g. an earlier
year's file) and PeGS computes the paper's MI order on it (``structure: public``). With a user
CSV there is no public sample: the roster's PeGS entries must then give their orders
(``structure: given``).

Evaluations (metric evaluations that read the original data, spec §4):

* ``marginal`` (Fig. 5): Σ_v (p̂_synth(v) − p̂_orig(v))² per variable, and their sum;
* ``conditional`` (Fig. 6): Σ_{x_j} Σ_{x_i} (p̂_synth(x_i | x_j) − p̂_orig(x_i | x_j))² per target
  i given j = age.yrs and j = patzip, and their sums over targets;
* ``regression`` (Figs. 7–8): the two models of ``..regression`` fitted to the original and to
  each release; the regression distance Σ|β_s − β_o|/|β_o| with and without the intercept, the
  release's coefficients and the original's;
* ``risk`` (Fig. 9): the MDC attack (most frequent MDC among released records with the
  target's age, sex and zip), the charge attack (mean charge bin index among released records
  with the target's age, los and zip), their match rates, and the uniqueness of released
  records on (age, sex, zip), within the release and in the original. Targets are the first
  ``n_targets`` original records (the records are exchangeable, so they are a random sample).
"""

from __future__ import annotations

import functools

import numpy as np

from harness.data import Original, RecordBatch
from harness.datafiles import data_path
from harness.engine.study import Study
from harness.errors import ConfigError
from harness.evaluation import MetricEvaluation
from harness.metrics.risk import mean_attack_mae, mode_attack_error, uniqueness
from harness.metrics.utility import (
    conditional_distance_to,
    conditionals,
    marginal_distance_to,
    regression_distance,
    shares,
)
from harness.synthesizers import make_synthesizer
from harness.validation import check_number

from ..data import CARDINALITIES, COL, LEVELS, ORDER, load_discharge_csv, schema, standin_discharge
from ..regression import COEFFICIENTS, fig7_coefficients

#: conditioning variables of Fig. 6 (a) and (b)
GIVEN = ("age.yrs", "patzip")
MODELS = ("linear", "logistic")
MDC_KEYS = ("age.yrs", "sex", "patzip")
CHARGE_KEYS = ("age.yrs", "los", "patzip")
UNIQUE_KEYS = ("age.yrs", "sex", "patzip")


def short(name: str) -> str:
    """A variable's name in metric names (``age.yrs`` -> ``age``)."""
    return name.split(".")[0]


class ParkGhoshMaps(Study):
    grid_rules = {"n": {"integer": True, "minimum": 100}}
    privacy_axes = ("epsilon_sample",)
    extra_keys = ("n_public", "n_targets", "data_csv")
    data_files = {"data_csv": None}

    # --- configuration -----------------------------------------------------------------------
    def validate(self) -> None:
        check_number("study.n_public", self.config.get("n_public"), integer=True, minimum=100)
        check_number("study.n_targets", self.config.get("n_targets"), integer=True, minimum=1)
        if self.config.get("data_csv"):
            self.user_codes()  # read and checked now: a bad file is one line, nothing written

    def check_contract(self, methods, scenario) -> None:
        """A user's ``data_csv`` has no public sample: every method that runs (``methods``)
        must take a given hash structure. The line gives an override that works for every
        label (Hydra's dotted keys cannot address a label with a dot, such as PeGS.rs)."""
        super().check_contract(methods, scenario)
        if not self.config.get("data_csv"):
            return
        public = [label for label in methods
                  if (self.config["roster"][label] or {}).get("structure", "given") == "public"]
        if public:
            given = ",".join(f"{label}:{{structure:given}}" for label in public)
            raise ConfigError(
                f"study.roster.{public[0]}.structure: 'public' needs a public sample, which a "
                f"user's data_csv does not have (allowed here: given, e.g. "
                f"'study.roster={{{given}}}', or leave {public[0]} out with methods=[...])")

    @functools.cache  # noqa: B019 (one file per study object)
    def user_codes(self) -> np.ndarray:
        return load_discharge_csv(data_path(self.config["data_csv"], "study.data_csv"),
                                  key="study.data_csv")

    # --- data --------------------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        if self.config.get("data_csv"):
            codes = self.user_codes()
            train = np.broadcast_to(codes.astype(float), (n_replicates, *codes.shape))
            return Original(self._batch(train))
        n, n_public = int(scenario["n"]), int(self.config["n_public"])
        train = standin_discharge(n * n_replicates, rng).reshape(n_replicates, n, len(ORDER))
        public = standin_discharge(n_public * n_replicates, rng).reshape(
            n_replicates, n_public, len(ORDER))
        return Original(self._batch(train.astype(float)),
                        {"public": self._batch(public.astype(float))})

    @staticmethod
    def _batch(codes: np.ndarray) -> RecordBatch:
        return RecordBatch(codes, columns=ORDER, schema=schema())

    # --- evaluations -------------------------------------------------------------------------
    def original_utility(self, original) -> tuple[list, dict]:
        """The original data's side of the marginal and conditional distances (each column's
        shares, the conditionals of every (target, given) pair), computed once per task: every
        release of the task is compared with the same original data."""
        def compute():
            orig = _codes(original.train)[:, None]
            marginal = [shares(orig[..., j], CARDINALITIES[j]) for j in range(len(ORDER))]
            conditional = {(i, COL[g]): conditionals(orig[..., i], orig[..., COL[g]],
                                                     CARDINALITIES[i], CARDINALITIES[COL[g]])
                           for g in GIVEN for i in range(len(ORDER)) if i != COL[g]}
            return marginal, conditional
        return self._per_original("utility", original, compute)

    def _per_original(self, name: str, original, compute):
        """``compute()`` once per original data set (a task's releases share it), kept under
        ``name`` until a task hands over other original data."""
        cache = self.__dict__.setdefault("_per_original_cache", {})
        held = cache.get(name)
        if held is None or held[0] is not original.train:
            cache[name] = held = (original.train, compute())
        return held[1]

    def marginal(self, original, release, scenario):
        po, synth = self.original_utility(original)[0], _codes(release.sets)
        out = {f"marginal_{short(v)}": marginal_distance_to(po[j], synth[..., j],
                                                            CARDINALITIES[j])
               for j, v in enumerate(ORDER)}
        out["marginal_sum"] = sum(out.values())
        return out

    def conditional(self, original, release, scenario):
        co, synth = self.original_utility(original)[1], _codes(release.sets)
        out = {}
        for given in GIVEN:
            g = COL[given]
            parts = {f"cond_{short(given)}_{short(v)}": conditional_distance_to(
                co[(i, g)], synth[..., i], synth[..., g], CARDINALITIES[i], CARDINALITIES[g])
                for i, v in enumerate(ORDER) if i != g}
            out.update(parts)
            out[f"cond_{short(given)}_sum"] = sum(parts.values())
        return out

    def original_coefficients(self, original) -> dict[str, np.ndarray]:
        """The Fig. 7 models' coefficients (R, 6) fitted to the original data, computed once
        per task: every release of the task (each ε) is compared with the same fit."""
        def compute():
            orig = _codes(original.train)
            beta = {k: np.empty((orig.shape[0], len(COEFFICIENTS))) for k in MODELS}
            for i in range(orig.shape[0]):
                for k, b in fig7_coefficients(orig[i]).items():
                    beta[k][i] = b
            return beta
        return self._per_original("coefficients", original, compute)

    def regression(self, original, release, scenario):
        synth = _codes(release.sets)
        r, m = synth.shape[:2]
        beta_o = self.original_coefficients(original)
        beta_s = {k: np.empty((r, m, len(COEFFICIENTS))) for k in MODELS}
        for i in range(r):
            for j in range(m):
                for k, b in fig7_coefficients(synth[i, j]).items():
                    beta_s[k][i, j] = b
        out = {}
        for k in MODELS:
            bo = beta_o[k][:, None]
            out[f"reg_{k}"] = regression_distance(beta_s[k], bo)
            out[f"reg_{k}_noint"] = regression_distance(beta_s[k], bo, include_intercept=False)
            for c, name in enumerate(COEFFICIENTS):
                label = "intercept" if c == 0 else name
                out[f"coef_{k}_{label}"] = beta_s[k][..., c]
                out[f"orig_coef_{k}_{label}"] = beta_o[k][:, c]
        return out

    def risk(self, original, release, scenario):
        orig, synth = _codes(original.train), _codes(release.sets)
        r, m = synth.shape[:2]
        t = min(int(self.config["n_targets"]), orig.shape[1])
        names = ("mdc_error", "mdc_match", "charge_mae", "charge_match", "unique_share",
                 "unique_in_original")
        out = {k: np.empty((r, m)) for k in names}
        cols = {k: [COL[v] for v in keys] for k, keys in
                (("mdc", MDC_KEYS), ("charge", CHARGE_KEYS), ("unique", UNIQUE_KEYS))}
        mdc, charge = COL["MDC"], COL["charge"]
        charge_na = len(LEVELS["charge"]) - 1
        for i in range(r):
            targets = orig[i, :t]
            t_charge = np.where(targets[:, charge] == charge_na, np.nan, targets[:, charge] + 1.0)
            for j in range(m):
                s = synth[i, j]
                s_charge = np.where(s[:, charge] == charge_na, np.nan, s[:, charge] + 1.0)
                a = mode_attack_error(targets[:, cols["mdc"]], targets[:, mdc],
                                      s[:, cols["mdc"]], s[:, mdc], CARDINALITIES[mdc])
                b = mean_attack_mae(targets[:, cols["charge"]], t_charge,
                                    s[:, cols["charge"]], s_charge)
                u = uniqueness(s[:, cols["unique"]], orig[i][:, cols["unique"]])
                out["mdc_error"][i, j], out["mdc_match"][i, j] = a.value, a.match_rate
                out["charge_mae"][i, j], out["charge_match"][i, j] = b.value, b.match_rate
                out["unique_share"][i, j] = u.fraction
                out["unique_in_original"][i, j] = u.unique_in_reference
        return out

    def evaluations(self):
        marginal = tuple(f"marginal_{short(v)}" for v in ORDER) + ("marginal_sum",)
        conditional = tuple(
            f"cond_{short(g)}_{short(v)}" for g in GIVEN for v in (*ORDER, "sum") if v != g)
        regression = tuple(
            f"{p}{k}_{c}" for k in MODELS for p in ("coef_", "orig_coef_")
            for c in ("intercept", *COEFFICIENTS[1:])) + tuple(
            f"reg_{k}{s}" for k in MODELS for s in ("", "_noint"))
        return [
            MetricEvaluation("marginal", self.marginal, names=marginal),
            MetricEvaluation("conditional", self.conditional, names=conditional),
            MetricEvaluation("regression", self.regression, names=regression),
            MetricEvaluation("risk", self.risk, names=(
                "mdc_error", "mdc_match", "charge_mae", "charge_match", "unique_share",
                "unique_in_original")),
        ]

    # --- methods -----------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


def _codes(batch: RecordBatch) -> np.ndarray:
    """The batch's records as int64 codes (..., n, 13)."""
    return batch.values.astype(np.int64)


STUDY_CLASS = ParkGhoshMaps
