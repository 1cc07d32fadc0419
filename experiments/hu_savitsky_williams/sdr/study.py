"""Hu, Savitsky & Williams, the SDR application (§3, Figs 1–2, Tables 2–3; spec 002 §7.1, §7.4
E1, §8, §9.1): one confidential survey sample (the calibrated stand-in of ``standin.py``, or the
user's CSV of the real PUF subset, ``data: csv``, ``puf.py``) released by

* ``ori``: the confidential sample itself, analysed with the survey estimators (the "Sample"
  column; its estimates are the truths every method is judged against, spec §8);
* ``fbs`` and ``fbp``: m = 3 synthetic sets at the Lipschitz bound Δ = 1.8 (ε = 2·1.8·3 = 10.8);
* ``laplace_tables``: the Laplace-mechanism tables at the same ε (``match_sets: 3``).

The paper releases once. Here a replicate is one more release of the *same* sample with fresh
method randomness (the data stream is not used: every replicate holds the same records), so the
Monte Carlo error of a verdict is the synthesis noise of one release, and replicate 0 is one
release like the paper's. Every release is analysed as in the repeated-sampling study
(``RepeatedSampling.analyse``: the 27 domains' counts and mean salaries with the stratified,
or for FBP counts the unstratified, linearised variance, pooled by the partial-synthesis rule).

Two metric evaluations beside the intervals:

* ``sdr_rmse``: the paper's cell RMSE of Fig. 2, √((θ̂ − θ̂_sample)² + SE²) with SE the pooled
  √T (spec §8), per cell (``rmse_count_F1_Male`` …) and, per release, the median and the
  interquartile range over the 27 cells of each table (``rmse_median_count`` …), and how far
  the male and female counts miss their field total (``margin_gap_count``);
* ``sdr_lipschitz`` (FBS, FBP): the record-level Lipschitz bounds of Fig. 1, as percentiles
  (0, 2.5, …, 100) of Δ_{α,i} (tuned fit) and of Δ_i (unweighted fit), and the share of records
  with Δ_{α,i} ≥ 0.9·Δ_α ("records concentrated around the overall bound");
* ``sdr_design`` (the sample): the design summaries the stand-in is calibrated to.
"""

from __future__ import annotations

import functools

import numpy as np

from harness.errors import ConfigError, allowed
from harness.evaluation import MetricEvaluation
from harness.inference.combine import combine
from harness.synthesizers import make_synthesizer
from harness.synthesizers.pseudo_posterior import FullyBayesPopulation, FullyBayesSample
from harness.validation import check_number

from ..mc.study import ANALYSES, DOMAINS, ESTIMANDS, RepeatedSampling, domain_label
from .puf import load_sdr_csv
from .standin import standin_sample

DATA_SOURCES = ("standin", "csv")
PERCENTILES = np.linspace(0.0, 100.0, 41)
NEAR_BOUND = 0.9  # "concentrated around the overall Lipschitz bound": Δ_{α,i} ≥ 0.9·Δ_α
COUNT_CELLS = tuple(e for e in ESTIMANDS if e.startswith("count_"))
MEAN_CELLS = tuple(e for e in ESTIMANDS if e.startswith("mean_"))


def percentile_name(kind: str, q: float) -> str:
    """``bound_weighted_p097.5`` style names of the Fig. 1 percentile metrics."""
    return f"bound_{kind}_p{q:05.1f}"


BOUND_METRICS = tuple(percentile_name(k, q) for k in ("weighted", "unweighted")
                      for q in PERCENTILES) + ("share_near_bound",)


DESIGN_METRICS = ("corr_salary_weight", "count_sensitivity", "max_weight", "weight_total")
#: (field total, its male cell, its female cell) and (grand total, male, female) positions
_MARGINS = tuple(
    (ESTIMANDS.index(f"count_{t}_total"), ESTIMANDS.index(f"count_{t}_Male"),
     ESTIMANDS.index(f"count_{t}_Female")) for t in ("all", *(f"F{f}" for f in range(1, 9))))


def margin_gap(estimate: np.ndarray) -> np.ndarray:
    """Largest relative gap |N̂_male + N̂_female − N̂_total| / N̂_total over the 8 fields and the
    grand total, per replicate: 0 (up to rounding) for tables of microdata, not for the Laplace
    mechanism's independently noised cells (§4.3, Table 2)."""
    gaps = [np.abs(estimate[:, m] + estimate[:, f] - estimate[:, t]) / np.abs(estimate[:, t])
            for t, m, f in _MARGINS]
    return np.max(gaps, axis=0)


def _check_data(key, value):
    if value not in DATA_SOURCES:
        raise allowed(key, value, DATA_SOURCES)


class _RecordBounds:
    """Mix-in for the pseudo-posterior synthesizers: their releases also report, per replicate,
    percentiles of the record bounds of the tuned fit (Δ_{α,i}) and of the unweighted fit (Δ_i),
    the figures' violins (Fig. 1), as diagnostics. The released data are untouched."""

    def tune(self, fit, lipschitz_bound, seed):
        tuned = super().tune(fit, lipschitz_bound, seed)
        self._bounds.append((tuned.record_bounds, fit.risk, tuned.bound))
        return tuned

    def _release(self, data, lipschitz_bound, ledger, rng, prepared):
        self._bounds = []
        sets, diag = super()._release(data, lipschitz_bound, ledger, rng, prepared)
        weighted = np.array([np.percentile(b, PERCENTILES) for b, _, _ in self._bounds])
        unweighted = np.array([np.percentile(np.where(np.isfinite(r), r, np.nan), PERCENTILES)
                               for _, r, _ in self._bounds])
        for j, q in enumerate(PERCENTILES):
            diag[percentile_name("weighted", q)] = weighted[:, j]
            diag[percentile_name("unweighted", q)] = unweighted[:, j]
        diag["share_near_bound"] = np.array([np.mean(b >= NEAR_BOUND * top)
                                             for b, _, top in self._bounds])
        return sets, diag


class RecordBoundsFBS(_RecordBounds, FullyBayesSample):
    pass


class RecordBoundsFBP(_RecordBounds, FullyBayesPopulation):
    pass


WITH_RECORD_BOUNDS = {"fbs": RecordBoundsFBS, "fbp": RecordBoundsFBP}


class SdrApplication(RepeatedSampling):
    grid_rules = {"data": _check_data}
    data_files = {"csv_path": "csv"}  # the path selects grid.data=[csv]
    extra_keys = ("population_seed", "sample_seed", "csv_path", "csv_columns", "expected_n",
                  "expected_weight_total", "fbp_count_variance", "fbp_mean_weights")

    def validate(self) -> None:
        super().validate()
        for key in ("population_seed", "sample_seed"):
            check_number(f"study.{key}", self.config.get(key, 0), integer=True, minimum=0)
        if "csv" in self.config["grid"]["data"]:
            if not self.config.get("csv_path"):
                raise ConfigError("study.csv_path: give the path of the SDR CSV for data: csv "
                                  "(columns field, gender, salary, weight)")
            self.sample("csv")  # a bad file fails here, before anything is written

    # --- data --------------------------------------------------------------------------------
    @functools.cache  # noqa: B019 (one sample per data source and study object)
    def sample(self, source: str):
        """The one confidential sample (a RecordBatch with one replicate)."""
        cfg = self.config
        if source == "csv":
            return load_sdr_csv(cfg["csv_path"], cfg.get("csv_columns"),
                                expected_n=cfg.get("expected_n"),
                                expected_weight_total=cfg.get("expected_weight_total"))
        return standin_sample(cfg.get("population_seed", 0), cfg.get("sample_seed", 0))

    def generate(self, scenario, rng, n_replicates):
        """The same sample in every replicate (the data stream ``rng`` is not drawn from)."""
        one = self.sample(scenario["data"])
        return one.__class__(
            np.repeat(one.values, n_replicates, axis=0), None, 1, one.columns,
            np.repeat(one.weights, n_replicates, axis=0),
            np.repeat(one.strata, n_replicates, axis=0), one.schema)

    # --- evaluation --------------------------------------------------------------------------
    @functools.cache  # noqa: B019 (one sample per data source and study object)
    def _truth_vector(self, source: str) -> np.ndarray:
        release = make_synthesizer("ori").release(self.sample(source), None,
                                                  np.random.default_rng(0))
        return self.analyse("sample", release)[0][0, 0]

    def truths(self, scenario) -> dict[str, float]:
        """The confidential sample's estimates (the paper's reference, spec §8)."""
        return dict(zip(ESTIMANDS, self._truth_vector(scenario["data"]).tolist(), strict=True))

    def paper_rmse(self, mode: str, release, scenario) -> dict[str, np.ndarray]:
        """Fig. 2's RMSE of every cell, √((q̄ − θ̂_sample)² + T), and per release the median and
        interquartile range over the 27 cells of counts and of means."""
        est, var = self.analyse(mode, release)
        pooled = combine(est, var, rule=self.config.get("combining_rule") or "partial")
        rmse = np.sqrt((pooled.estimate - self._truth_vector(scenario["data"])) ** 2
                       + pooled.variance)
        out = {f"rmse_{name}": rmse[:, j] for j, name in enumerate(ESTIMANDS)}
        for kind, cells in (("count", COUNT_CELLS), ("mean", MEAN_CELLS)):
            block = rmse[:, [ESTIMANDS.index(c) for c in cells]]
            q25, q50, q75 = np.percentile(block, [25, 50, 75], axis=1)
            out[f"rmse_median_{kind}"] = q50
            out[f"rmse_iqr_{kind}"] = q75 - q25
        out["margin_gap_count"] = margin_gap(pooled.estimate)
        return out

    @staticmethod
    def design(original, release, scenario) -> dict[str, np.ndarray]:
        """The confidential sample's design summaries the stand-in is calibrated to (A5):
        corr(salary, weight), the largest within-cell weight range (Eq. 8, interior level),
        the largest weight, and the weighted total N̂."""
        sets = release.sets
        names = list(sets.columns)
        y = sets.values[:, 0, :, names.index("salary")]
        w = sets.weights[:, 0]
        cells = (sets.values[:, 0, :, names.index("field")] * 2
                 + sets.values[:, 0, :, names.index("gender")]).astype(np.int64)
        ranges = np.stack([np.where(cells == c, w, np.nan) for c in range(DOMAINS.n_cells)])
        with np.errstate(invalid="ignore"):
            spread = np.nanmax(ranges, axis=-1) - np.nanmin(ranges, axis=-1)
        corr = [np.corrcoef(y[r], w[r])[0, 1] for r in range(len(w))]
        return {"corr_salary_weight": np.array(corr),
                "count_sensitivity": np.nanmax(spread, axis=0),
                "max_weight": w.max(axis=-1), "weight_total": w.sum(axis=-1)}

    @staticmethod
    def record_bounds(original, release, scenario) -> dict[str, np.ndarray]:
        return {k: np.asarray(release.diagnostics[k]) for k in BOUND_METRICS}

    def evaluations_for(self, label):
        name, _ = self.roster_entry(label)
        mode = ANALYSES[name]
        out = list(super().evaluations_for(label))
        out.append(MetricEvaluation(
            "sdr_rmse", lambda original, release, scenario: self.paper_rmse(mode, release,
                                                                            scenario),
            kinds=("records", "statistics"),
            names=tuple(f"rmse_{e}" for e in ESTIMANDS)))
        if name == "ori":
            out.append(MetricEvaluation("sdr_design", self.design, names=DESIGN_METRICS))
        if name in WITH_RECORD_BOUNDS:
            out.append(MetricEvaluation("sdr_lipschitz", self.record_bounds,
                                        names=BOUND_METRICS))
        return out

    # --- methods -----------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        if name not in WITH_RECORD_BOUNDS:
            return super().method(label, scenario)
        params.setdefault("outcome", "salary")
        make_synthesizer(name, key=f"study.roster.{label}", **params)  # one-line errors
        return WITH_RECORD_BOUNDS[name](**params)


assert domain_label(DOMAINS.names[0]) == "all_total"
STUDY_CLASS = SdrApplication
