"""Hu, Savitsky & Williams, the repeated-sampling study (appendix F; spec 002 §7.3–§7.4 E3, §8,
§9.3): R informative samples (n = 1000) from the one simulation population, each released by

* ``ori``: the confidential sample itself, analysed with the survey estimators;
* ``fbs`` and ``fbp``: M = 10 synthetic sets per replicate at every Lipschitz bound Δ of the
  privacy axis ``lipschitz_bound``, pooled for each m of ``pool_m`` (nested m: one fit per
  replicate and Δ serves every m, ε = 2·Δ·m);
* ``laplace_tables``: the Laplace-mechanism tables at the ε of the synthesizers' m = 3
  (``match_sets: 3``, ε = 2·Δ·3).

Evaluation ``survey_tables`` (intervals): the 27 domains of the field × gender table (8 × 2
interior cells, 8 field totals, 2 gender margins, the grand total), each as a domain count and a
mean salary, 54 estimands with the finite population's values as truths. Per released set:

* the sample: weighted counts and means with the stratified linearised variance (strata =
  fields);
* FBS: the same on the synthetic salaries with the smoothed synthetic weights;
* FBP: counts with the smoothed weights and, by default, the unstratified count variance
  (``fbp_count_variance``; spec A21, the paper's numbers), means with cell-constant weights
  N̂_fg/n_fg (``fbp_mean_weights``; spec §5.1), i.e. unweighted within a cell;
* Laplace: its noisy estimates and noisy half-sample variances.

Sets are pooled with the partial-synthesis rule (T = b/m + ū, t interval; m = 1: T = ū with the
normal quantile); the one-set releases (sample, Laplace) therefore give their own variance and a
normal interval. FBP's π scale (``pi_scale`` of the FBP roster entry: ``mean1``, the default, or
``actual``) is the variant behind the FBP mean-salary interval discrepancy (spec §9.4).
"""

from __future__ import annotations

import functools

import numpy as np

from harness.engine.study import Study
from harness.errors import allowed
from harness.evaluation import IntervalEvaluation
from harness.inference.survey import COUNT_VARIANCES, MEAN_WEIGHTS, survey_table, two_way_domains
from harness.synthesizers import make_synthesizer

from ..population import (
    CELL_SIZES,
    FIELDS,
    GENDERS,
    SAMPLE_SIZE,
    Population,
    draw_samples,
    make_population,
)

DOMAINS = two_way_domains(FIELDS, GENDERS)
#: how the releases of each synthesizer are analysed
# "tabular": the benchmark's adapter (issue 24), its synthetic records analysed as a sample
ANALYSES = {"ori": "sample", "fbs": "fbs", "fbp": "fbp", "laplace_tables": "tables",
            "tabular": "sample"}


def domain_label(name: str) -> str:
    """``"1|Male"`` → ``"F1_Male"``, ``"*|*"`` → ``"all_total"`` (names usable as report keys)."""
    row, col = name.split("|")
    return f"{'all' if row == '*' else 'F' + row}_{'total' if col == '*' else col}"


ESTIMANDS = tuple(f"{kind}_{domain_label(d)}" for kind in ("count", "mean")
                  for d in DOMAINS.names)


def population_truths(pop: Population) -> dict[str, float]:
    """The finite population's domain counts and mean salaries, in ``ESTIMANDS`` order."""
    k = DOMAINS.n_cells
    counts = np.bincount(pop.cell, minlength=k).astype(float) @ DOMAINS.matrix
    sums = np.bincount(pop.cell, weights=pop.salary, minlength=k) @ DOMAINS.matrix
    return dict(zip(ESTIMANDS, np.concatenate([counts, sums / counts]).tolist(), strict=True))


class RepeatedSampling(Study):
    grid_rules = {"n": {"integer": True, "minimum": 100}}
    privacy_axes = ("lipschitz_bound",)
    extra_keys = ("population_seed", "fbp_count_variance", "fbp_mean_weights")

    def validate(self) -> None:
        for key, choices in (("fbp_count_variance", COUNT_VARIANCES),
                             ("fbp_mean_weights", MEAN_WEIGHTS)):
            value = self.config.get(key)
            if value not in choices:
                raise allowed(f"study.{key}", value, choices)
        for label in self.config["roster"]:
            name, _ = self.roster_entry(label)
            if name not in ANALYSES:
                raise allowed(f"study.roster.{label}.synthesizer", name, list(ANALYSES))

    @functools.cached_property
    def population(self) -> Population:
        seed = self.config.get("population_seed", 0)
        return make_population(np.random.default_rng(int(seed)))

    # --- data --------------------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        return draw_samples(self.population, rng, n_replicates, int(scenario["n"]))

    # --- evaluation --------------------------------------------------------------------------
    def truths(self, scenario) -> dict[str, float]:
        truths = population_truths(self.population)
        assert np.array_equal([truths[f"count_{domain_label(d)}"] for d in DOMAINS.names],
                              CELL_SIZES.ravel() @ DOMAINS.matrix)
        return truths

    def analyse(self, mode: str, release):
        sets = release.sets
        if mode == "tables":
            return (np.concatenate([sets.counts, sets.means], axis=-1),
                    np.concatenate([sets.count_variance, sets.mean_variance], axis=-1))
        fbp = mode == "fbp"
        names = list(sets.columns)
        cells = (sets.values[..., names.index("field")].astype(np.int64) * len(GENDERS)
                 + sets.values[..., names.index("gender")].astype(np.int64))
        t = survey_table(
            cells, sets.weights, sets.values[..., names.index("salary")], DOMAINS,
            sets.strata, len(FIELDS),
            count_variance=self.config["fbp_count_variance"] if fbp else "stratified",
            mean_weights=self.config["fbp_mean_weights"] if fbp else "weighted")
        return (np.concatenate([t.counts, t.means], axis=-1),
                np.concatenate([t.count_variance, t.mean_variance], axis=-1))

    def _evaluation(self, mode: str) -> IntervalEvaluation:
        return IntervalEvaluation(
            "survey_tables", self.truths,
            lambda original, release, scenario: self.analyse(mode, release),
            self.config.get("combining_rule") or "partial", kinds=("records", "statistics"))

    def evaluations(self):
        return [self._evaluation("sample")]

    def evaluations_for(self, label):
        """Every method's releases are read by ``survey_tables``, analysed as its synthesizer's
        output needs (``ANALYSES``)."""
        name, _ = self.roster_entry(label)
        own = self._evaluation(ANALYSES[name])
        return [own if ev.name == own.name else ev for ev in super().evaluations_for(label)]

    # --- methods -----------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        if name != "ori":
            params.setdefault("outcome", "salary")
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


assert len(ESTIMANDS) == 54 and SAMPLE_SIZE == 1000
STUDY_CLASS = RepeatedSampling
