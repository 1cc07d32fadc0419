"""Bowen, Liu & Su, the CPS youth-voter study (§4.2; spec 003 §4.2–§4.3, §5.3–§5.6, §6): the
15-attribute 2000–2012 CPS subset (n = 44,821), ε = e^{−2..2}, m = 5 sets at ε/5 each, 10
repetitions of every release **on the same original data** (the paper's design: one real data
set, repeated synthesis).

Data. The real file cannot be fetched here: by default the original data are one draw of the
calibrated stand-in of spec §4.3 (:func:`experiments.steps.cps.standin_cps`) from the fixed
seed ``standin_seed``, of the grid's n records; ``data_csv`` names a user's CSV of the real
subset instead (:func:`experiments.steps.cps.load_cps_csv`; the grid's n must then equal its
number of records). Every replicate (repetition) of a block holds the same data.

Methods (roster): the flat Laplace sanitizer, UH-mod-2/3 (random layers), STEPS-2 (Voted,
College) and STEPS-3 (Voted, College, Prereg) with r = 0, all respecting the structural zero
voted = yes & registered = no (spec A7), and PrivBayes (k = 2, β = .5; ``correct`` and the
paper-era ``paper`` noise, which is not DP and does not respect the structural zero).

Evaluations (metric rows per repetition):

* ``specks`` (§5.3): per set the KS distance between the propensity scores of the original and
  synthetic records, from a logistic model with all main effects and two-way interactions of
  the 15 categorical attributes; SPECKS is its mean over the sets (and pMSE beside it). The
  R-like fit (:mod:`harness.inference.glm_logit`) takes its least-squares steps on the sparse
  design's structured normal equations (``specks_solver: sparse``: the ``qr`` answer, R's
  aliasing and iterations, to ~1e-14 in the fitted scores, about 50x faster at 502 columns;
  ``qr`` and ``normal`` stay selectable);
* ``chi2`` (§5.4): the 105 pairwise Pearson χ² tests, pooled over the sets by D2, and the
  consistency rates at α = .01, .05, .10 (``cr1``, ``cr5``, ``cr10``), plus the 4×4 cross-tab
  of p-value categories (``xtab_<orig>_<syn>``, Tables 4–9 read repetition 1);
* ``did`` (§5.5): the difference-in-differences logistic model of Voted on the 14 other
  attributes (age numeric 18..22) and Prereg × Registration (32 coefficients), R-glm-like fits,
  Wald intervals on the original, the partial rule over the sets, and the Karr overlap: its mean
  over the 32 coefficients (``ci_all``) and for Prereg, Registration and Prereg × Reg.
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from harness.data import RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.evaluation import MetricEvaluation
from harness.inference.design import dummy_design
from harness.inference.glm_logit import SOLVERS, GlmControl
from harness.metrics.association import chi2_consistency
from harness.metrics.overlap import logistic_ci_overlap
from harness.metrics.propensity import propensity_metrics
from harness.synthesizers import make_synthesizer
from harness.validation import check_number

from .. import cps

ALPHAS = (0.01, 0.05, 0.10)
CR_NAMES = ("cr1", "cr5", "cr10")
P_CATEGORIES = ("le01", "le05", "le10", "gt10")  # ≤.01, (.01,.05], (.05,.1], >.1
#: the DID model (§5.5): Voted on the other 14 attributes, age numeric, and Prereg × Reg
DID_RESPONSE = "voted"
DID_PREDICTORS = tuple(c for c in cps.ORDER if c != DID_RESPONSE)
DID_FOCAL = {"ci_prereg": "prereg_1", "ci_reg": "registered_1",
             "ci_pxr": "prereg_1:registered_1"}
AGE_YEARS = tuple(float(a) for a in cps.LEVELS["age"])


@lru_cache(maxsize=2)
def _standin(n: int, seed: int) -> np.ndarray:
    codes = cps.standin_cps(n, np.random.default_rng(seed))
    codes.setflags(write=False)
    return codes


@lru_cache(maxsize=2)
def _csv(path: str) -> np.ndarray:
    codes = cps.load_cps_csv(path)
    codes.setflags(write=False)
    return codes


def did_design(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The DID model's design (n, 32), response (n,) and column names of CPS codes (n, 15)."""
    cols = [cps.COL[c] for c in DID_PREDICTORS]
    levels = [len(cps.LEVELS[c]) for c in DID_PREDICTORS]
    pair = (DID_PREDICTORS.index("prereg"), DID_PREDICTORS.index("registered"))
    x, names = dummy_design(codes[:, cols], levels, interactions=[pair],
                            numeric={DID_PREDICTORS.index("age"): AGE_YEARS},
                            names=DID_PREDICTORS)
    return x, codes[:, cps.COL[DID_RESPONSE]].astype(float), names


def cards() -> list[int]:
    return [len(v) for v in cps.LEVELS.values()]


def specks_metrics(original, release, scenario, solver: str = "sparse") -> dict:
    """SPECKS KS, pMSE and its ratio per set (R, m) (§5.3); the logistic fit's weighted
    least-squares steps by ``solver`` (:class:`harness.inference.glm_logit.GlmControl`)."""
    return propensity_metrics(original.train.values.astype(np.int64),
                              release.sets.values.astype(np.int64), cards(),
                              control=GlmControl(solver=solver))


def chi2_metrics(original, release, scenario) -> dict:
    """Consistency rates at the three α (R,) and the p-value category cross-tab (§5.4)."""
    res = chi2_consistency(original.train.values.astype(np.int64),
                           release.sets.values.astype(np.int64), cards(), ALPHAS)
    out = {name: res.rates[:, a] for a, name in enumerate(CR_NAMES)}
    for i, po in enumerate(P_CATEGORIES):
        for j, ps in enumerate(P_CATEGORIES):
            out[f"xtab_{po}_{ps}"] = res.crosstab[:, i, j].astype(float)
    return out


def did_metrics(original, release, scenario, solver: str = "qr") -> dict:
    """The Karr CI overlap of the DID model (§5.5): mean over the 32 coefficients and the three
    focal ones, per repetition (R,); the R-like fits' least-squares steps by ``solver``."""
    orig = original.train.values.astype(np.int64)
    sets = release.sets.values.astype(np.int64)
    r = sets.shape[0]
    out = {k: np.empty(r) for k in ("ci_all", *DID_FOCAL, "did_converged")}
    for i in range(r):
        x0, y0, names = did_design(orig[i])
        xs, ys = zip(*(did_design(s)[:2] for s in sets[i]), strict=True)
        res = logistic_ci_overlap(x0, y0, xs, ys, control=GlmControl(solver=solver))
        out["ci_all"][i] = res.j.mean()
        for key, name in DID_FOCAL.items():
            out[key][i] = res.j[names.index(name)]
        out["did_converged"][i] = float(res.converged.all())
    return out


class CpsStudy(Study):
    grid_rules = {"n": {"integer": True, "minimum": 2}}
    extra_keys = ("standin_seed", "data_csv", "specks_solver", "did_solver")
    data_files = {"data_csv": None}

    def validate(self) -> None:
        c = self.config
        check_number("study.standin_seed", c.get("standin_seed", 0), integer=True, minimum=0)
        for key in ("specks_solver", "did_solver"):
            if c.get(key, "qr") not in SOLVERS:
                raise allowed(f"study.{key}", c.get(key), SOLVERS)
        path = c.get("data_csv")
        if path is not None:
            n_file = _csv(str(path)).shape[0]
            for n in c["grid"]["n"]:
                if int(n) != n_file:
                    raise ConfigError(f"study.grid.n: {n} is not the {n_file} records of "
                                      f"study.data_csv (give grid.n: [{n_file}])")

    def original_codes(self, n: int) -> np.ndarray:
        path = self.config.get("data_csv")
        if path is not None:
            return _csv(str(path))
        return _standin(n, int(self.config.get("standin_seed", 0)))

    def generate(self, scenario, rng, n_replicates):
        codes = self.original_codes(int(scenario["n"]))
        values = np.broadcast_to(codes, (n_replicates, *codes.shape)).astype(float)
        return RecordBatch(values, columns=cps.ORDER, schema=cps.schema())

    def evaluations(self):
        solver = self.config.get("specks_solver", "sparse")
        return [MetricEvaluation("specks", partial(specks_metrics, solver=solver),
                                 names=("specks", "pmse", "pmse_ratio", "propensity_converged")),
                MetricEvaluation("chi2", chi2_metrics),
                MetricEvaluation("did", partial(did_metrics,
                                                solver=self.config.get("did_solver", "qr")),
                                 names=("ci_all", *DID_FOCAL, "did_converged"))]

    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = CpsStudy
