"""Bowen, Liu & Su, the simulation study (§4.1; spec 003 §4.1, §5.2, §6): Models 1 and 2 with
four categorical predictors X1..X4 and a normal outcome Y (:mod:`experiments.steps.simulation`),
n ∈ {4000, 10000}, ε ∈ {0.5, 2, 5, 10}, m = 4 synthetic sets at ε/4 each.

Data (per replicate, common to every method and ε: the engine's data stream depends on the
scenario and block only): ``train`` (n records: the codes of X1..X4 and the numeric
Y) and ``test`` (n = 100 further records of the same model, for prediction). The schema gives
X's levels and Y's public range (the 0.0005/0.9995 quantiles of its true marginal, spec A5);
every synthesizer cuts Y into ``y_bins`` equal-width bins over that range (the tree methods
through their ``bins``, PrivBayes through :class:`.binned.BinnedCoded`) and draws synthetic Y
uniformly within its bin (spec §2.6).

Methods (roster): STEPS with its split of the attributes into two layers chosen by
``tree_mode``, UH-mod (L = 4 random layers, a new order per set), PrivBayes (k = 2, β = 0.5;
``correct`` and the paper-era ``paper`` noise) and the original data (Ori).

STEPS's split (``tree_mode``; :data:`TREE_MODES`, default :data:`PAPER_TREE_MODE`):

* ``em_grouped`` (the default: the paper's rule). §2.2.3, the paragraph after Eqn (5): "the
  data in a node can be partitioned by a group of variables ... There are 15 ways of splitting
  the 5 variables into two clusters ... we may use the l_1 difference between the two clusters
  on the average importance measures across the variables in each cluster as the utility
  function for the exponential mechanism ... the group with the higher average importance
  measure will be put in layer 1 and the other will be in layer 2. This generalized splitting
  scheme is what is used in the simulation studies"; §4.1: "we split the total ε in a 1:9 ratio
  between building the tree and sanitizing node counts ... We used AIC as the utility function
  in the exponential mechanism for choosing partitioning attributes". So: the AIC of each
  attribute's univariate log-linear model on the private data (importance: lower AIC, Lemma 1),
  u = |mean AIC of cluster 1 − mean AIC of cluster 2| over the 15 two-cluster splits of
  X1..X4 and binned Y, one exponential-mechanism draw per synthetic set at r·ε/m with r = 0.1
  (the whole tree-building share: the grouped split is the tree's only selection), the cluster
  of lower mean AIC as layer 1; the counts of the two levels at (1 − r)·ε/(2m) each
  (``harness.synthesizers.steps.Steps``, ``selection: grouped_split``). The paper does not
  state the utility's sensitivity: δ_u = 4 (each cluster mean moves by at most Lemma 1's 2,
  spec A10), recorded in the ledger with its ε.
* ``fixed_paper``: the split the paper reports its selection chose, ``steps_levels`` =
  [X1, X2, X4] → [X3, Y] ("Since the group of variables (X1, X2, X4) had much smaller AIC than
  the group (X3, Y), we used the former group ... in Layer 1", §4.1), given as a fixed tree; r
  stays reserved but is not spent, so its releases claim and spend (1 − r)·ε (spec A3).

No non-DP multiple synthesis (MS): the paper has none and the harness has no posterior model of
this design.

Evaluation ``coefficients`` (spec §5.2): on each set the true model is fitted — Model 1 by OLS
on the dummies, Model 2 by ridge on the 120 cell indicators with λ chosen by GCV over
``ridge_log10_lambda`` (sandwich variances, spec A4) — and the m fits are pooled with the
partial-synthesis rule T = W + B/m (§5.1); aggregation gives bias, RMSE and coverage. The same
fits give the prediction MSE and RMSE on the test part with β̄ (the mean over the released
sets; this study does not use nested m) as metric rows ``pred_mse``, ``pred_rmse``.
"""

from __future__ import annotations

import numpy as np

from harness.data import Original, RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.evaluation import IntervalEvaluation, IntervalOutput
from harness.inference import COMBINING_RULES
from harness.inference.least_squares import ols_inference, ridge_gcv_moments
from harness.schema import Schema
from harness.synthesizers import make_synthesizer
from harness.validation import check_number

from .. import simulation as sim
from .binned import BinnedCoded

TREE = ("steps", "uh_mod", "flat_laplace")
CODED = ("privbayes",)
TREE_MODES = ("em_grouped", "fixed_paper")
#: the tree_mode of a steps roster entry that names none: the paper's AIC/EM split
PAPER_TREE_MODE = "em_grouped"
COLUMNS = (*sim.X_NAMES, "Y")


def schema(model: str, x_probs=None, bins: int = sim.Y_BINS) -> Schema:
    """X1..X4 with their levels (codes 0..k−1) and Y numeric over its public range."""
    edges = sim.y_edges(model, x_probs, bins)
    cols = [{"name": name, "levels": list(range(k))}
            for name, k in zip(sim.X_NAMES, sim.X_LEVELS, strict=True)]
    cols.append({"name": "Y", "bounds": [float(edges[0]), float(edges[-1])]})
    return Schema.from_config({"columns": cols}, "study.schema")


def _records(model: str, n: int, r: int, rng, x_probs) -> np.ndarray:
    out = np.empty((r, n, len(COLUMNS)))
    for i in range(r):
        x, y = sim.simulate(model, n, rng, x_probs)
        out[i, :, :4], out[i, :, 4] = x, y
    return out


class Simulation(Study):
    grid_rules = {"model": lambda key, value: sim.check_model(value, key),
                  "n": {"integer": True, "minimum": 2}}
    extra_keys = ("test_n", "x_probs", "y_bins", "ridge_log10_lambda", "steps_levels")

    def validate(self) -> None:
        c = self.config
        check_number("study.test_n", c.get("test_n", 100), integer=True, minimum=1)
        check_number("study.y_bins", c.get("y_bins", sim.Y_BINS), integer=True, minimum=1)
        grid = c.get("ridge_log10_lambda") or [-4, 2, 61]
        if not (isinstance(grid, (list, tuple)) and len(grid) == 3 and grid[0] < grid[1]
                and isinstance(grid[2], int) and grid[2] >= 1):
            raise ConfigError("study.ridge_log10_lambda: give [from, to, count], e.g. [-4, 2, 61]"
                              f", got {grid!r}")
        sim.x_distribution(c.get("x_probs"))
        if c.get("combining_rule", "partial") not in COMBINING_RULES:
            raise allowed("study.combining_rule", c.get("combining_rule"), COMBINING_RULES)
        levels = c.get("steps_levels") or [["X1", "X2", "X4"], ["X3", "Y"]]
        flat = [a for g in levels for a in g]
        if sorted(flat) != sorted(COLUMNS):
            raise ConfigError(f"study.steps_levels: give disjoint lists covering "
                              f"{', '.join(COLUMNS)}, got {levels!r}")
        for label, entry in c["roster"].items():
            mode = entry.get("tree_mode")
            if mode is not None and mode not in TREE_MODES:
                raise allowed(f"study.roster.{label}.tree_mode", mode, TREE_MODES)

    # --- settings --------------------------------------------------------------------------
    def y_bins(self) -> int:
        return int(self.config.get("y_bins", sim.Y_BINS))

    def lambdas(self) -> np.ndarray:
        lo, hi, k = self.config.get("ridge_log10_lambda") or [-4, 2, 61]
        return np.logspace(lo, hi, k)

    def schema(self, scenario) -> Schema:
        return schema(scenario["model"], self.config.get("x_probs"), self.y_bins())

    # --- data --------------------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        model, n = scenario["model"], int(scenario["n"])
        x_probs = self.config.get("x_probs")
        sch = self.schema(scenario)
        train = _records(model, n, n_replicates, rng, x_probs)
        test = _records(model, int(self.config.get("test_n", 100)), n_replicates, rng, x_probs)
        return Original(RecordBatch(train, columns=COLUMNS, schema=sch),
                        {"test": RecordBatch(test, columns=COLUMNS, schema=sch)})

    # --- evaluation --------------------------------------------------------------------------
    def estimands(self, scenario) -> dict[str, float]:
        model = scenario["model"]
        return dict(zip(sim.coefficient_names(model), map(float, sim.true_beta(model)),
                        strict=True))

    def fit(self, model: str, x: np.ndarray, y: np.ndarray):
        """Coefficients and variances (..., d) of the true model on sets of codes ``x``
        (..., n, 4) and outcomes ``y`` (..., n) (spec §5.2). Model 2's ridge reads the cell
        counts, cell sums of Y and Σy² (its design's sufficient statistics: XᵀX is diagonal),
        which gives the numbers of the (n, 120) design without building it."""
        x = x.astype(np.int64)
        if model == "main_effect":
            design = sim.design(model, x.reshape(-1, 4)).reshape(*x.shape[:-1], -1)
            return ols_inference(design, y)
        k = int(np.prod(sim.X_LEVELS))
        cell = np.ravel_multi_index(tuple(np.moveaxis(x, -1, 0)), sim.X_LEVELS)
        batch = int(np.prod(cell.shape[:-1]))
        index = (np.arange(batch).reshape(cell.shape[:-1])[..., None] * k + cell).ravel()
        counts = np.bincount(index, minlength=batch * k).reshape(*cell.shape[:-1], k)
        sums = np.bincount(index, weights=y.ravel(), minlength=batch * k).reshape(counts.shape)
        beta, var, _ = ridge_gcv_moments(counts.astype(float), sums, (y ** 2).sum(-1), x.shape[-2],
                                         self.lambdas())
        return beta, var

    def analyse(self, original, release, scenario) -> IntervalOutput:
        model = scenario["model"]
        sets = release.sets.values  # (R, m, n, 5)
        test = original.part("test").values  # (R, n_test, 5)
        est, var = self.fit(model, sets[..., :4], sets[..., 4])
        beta_bar = np.nanmean(est, axis=1)  # (R, d)
        x_test = test[..., :4].astype(np.int64)
        design = sim.design(model, x_test.reshape(-1, 4)).reshape(*x_test.shape[:-1], -1)
        pred = (design @ beta_bar[..., None])[..., 0]
        mse = np.mean((test[..., 4] - pred) ** 2, axis=-1)
        return IntervalOutput(est, var, metrics={"pred_mse": mse, "pred_rmse": np.sqrt(mse)})

    def evaluations(self):
        return [IntervalEvaluation("coefficients", self.estimands, self.analyse,
                                   self.config.get("combining_rule") or "partial")]

    # --- methods -----------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        key = f"study.roster.{label}"
        bins = {"Y": self.y_bins()}
        if name in TREE or name in CODED:
            if "bins" in params:
                raise ConfigError(f"{key}.bins: set by study.y_bins, not in the roster")
        mode = params.pop("tree_mode", None)
        if mode is not None and name != "steps":
            raise ConfigError(f"{key}.tree_mode: only for synthesizer steps")
        if name == "steps" and (mode is not None or not {"ranking", "order"} & set(params)):
            mode = mode or PAPER_TREE_MODE  # an entry that sets its own ranking is left alone
            if mode == "fixed_paper":
                params["order"] = [list(g) for g in (self.config.get("steps_levels")
                                                     or [["X1", "X2", "X4"], ["X3", "Y"]])]
            else:
                params.update(ranking="statistical", selection="grouped_split")
        if name in TREE:
            return make_synthesizer(name, key=key, bins=bins, **params)
        if name in CODED:
            return BinnedCoded(make_synthesizer(name, key=key, **params), bins)
        return make_synthesizer(name, key=key, **params)


STUDY_CLASS = Simulation
