"""Bi & Shen, benchmark R2 (Table 3 "Bank Marketing" and its appendix; spec 004 §4 R2): logistic
regression on the Portuguese bank-marketing data.

One fixed data set, as in the paper: the real records when ``data_csv`` names a user's copy of
``bank-additional-full.csv`` (:func:`.data.load_bank_csv`), otherwise the stand-in
(:func:`.data.standin_bank`; its assumptions are labelled there). Every replicate releases the
same N records (11 columns: 10 covariates and the response); replicates differ in the hold-out
split and the noise. The data user fits an unpenalised logistic regression (with intercept) of
y on the 10 covariates; the metric is the mean over the N original covariate rows of
KL(Bern(p_i) ‖ Bern(q_i)), p from the fit on the original data and q from the fit on the
release (spec A18), +inf when some q_i is 0 or 1 in floating point (the paper's "Infinity").

The fit is R's ``glm`` as a data user would run it [ours: the paper names no software]
(:func:`harness.inference.regression.glm_logistic`): the MLE where it exists, and where a
release separates the data (a released binary column whose ones all have the same response,
e.g. ``default``, which has 3 ones in 30,488) R's own IRLS path (its start, deviance rule and
25-iteration cap, :func:`harness.inference.glm_logit.glm_logit`), whose stopping point is then
R's answer; a constant released column (aliased in ``glm``) has coefficient 0, as ``predict``
treats R's NA. The metrics ``logistic_unconverged`` and ``logistic_separated`` are the
shares of fits for which R reports no convergence and of releases with no finite MLE.

Methods (spec §2, §4 R2, A6, A17; every constant in ``conf/study/bi_shen_r2.yaml``):

* DIP_15, DIP_25, DIP_35: Algorithm 1 on all 11 columns (ε/11 each), every column discrete and
  continualized on its public integer lattice, one random variable order per replicate (as in
  S5), hold-out m = round(h·N);
* NLRM: Laplace(Δ_j·11/ε) on each column, Δ_j its range, the response rounded to {0, 1}
  (threshold 0.5, A17);
* OPM: the paper's, Duchi et al.'s private GLM (§5.2.1; ``harness.synthesizers.private_glm``):
  each record privatizes y_i·(1, x_i) with the ℓ2-ball mechanism at ε (radius max_i ‖(1, x_i)‖,
  read from the data), and the data user solves the logistic score equations with the noisy
  sum, the covariates public (Duchi et al.'s fixed design; spec §2 resolution, A14). It releases
  the fitted model, not records;
* NOPM: the naive column-wise ℓ2-ball OPM of S3 (d = n, radius √n·max|Z_j|), the response
  rounded to {0, 1}: the reading used before OPM was implemented, kept beside it."""

from __future__ import annotations

import functools

import numpy as np

from harness.data import Original, RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError
from harness.evaluation import MetricEvaluation
from harness.inference.regression import glm_logistic, logistic_probabilities
from harness.metrics.accuracy import mean_bernoulli_kl
from harness.synthesizers import make_synthesizer
from harness.synthesizers.dip_transform import column_kind

from ..sources import check_csv_source, data_csv_path, source_rule
from .data import COLUMNS, load_bank_csv, standin_bank

P = len(COLUMNS) - 1  # covariates


class BankMarketing(Study):
    grid_rules = {"data": source_rule}
    extra_keys = ("standin", "data_csv", "dip_columns")
    data_files = {"data_csv": "csv"}  # the path selects grid.data=[csv]

    def validate(self) -> None:
        s = self.config.get("standin") or {}
        for key in ("seed", "n"):
            v = s.get(key)
            if not isinstance(v, int) or isinstance(v, bool) or v < (0 if key == "seed" else 50):
                raise ConfigError(f"study.standin.{key}: must be an integer >= "
                                  f"{0 if key == 'seed' else 50}, got {v!r}")
        kinds = self.config.get("dip_columns")
        if not isinstance(kinds, dict) or set(kinds) != set(COLUMNS):
            raise ConfigError(f"study.dip_columns: give one column kind for each of "
                              f"{', '.join(COLUMNS)}")
        for c in COLUMNS:  # parsed now, not at the first release: one line, nothing written
            column_kind(f"study.dip_columns.{c}", kinds[c])
        check_csv_source(self.config, "the UCI file bank-additional-full.csv", self.records)

    @functools.cache  # noqa: B019 (one data set per study object and source)
    def records(self, source: str) -> np.ndarray:
        """The (N, 11) records of ``source``: the stand-in, or the user's CSV."""
        if source == "csv":
            return load_bank_csv(data_csv_path(self.config))
        s = self.config["standin"]
        return standin_bank(int(s["seed"]), int(s["n"]))

    @functools.cache  # noqa: B019
    def original_probabilities(self, source: str) -> np.ndarray:
        """p_i (N,): the logistic fit on the original records, at their covariates."""
        z = self.records(source)
        beta, ok, _ = glm_logistic(z[:, :P], z[:, P])
        if not ok:
            raise ConfigError(f"study.grid.data: the logistic fit on the {source} data does not "
                              f"converge")
        return logistic_probabilities(z[:, :P], beta)

    # --- data ----------------------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        z = self.records(scenario["data"])
        values = np.broadcast_to(z, (n_replicates, *z.shape))
        return Original(RecordBatch(values, columns=COLUMNS), {"source": scenario["data"]})

    # --- evaluation ----------------------------------------------------------------------------
    def logistic_kl(self, original, release, scenario):
        """Mean Bernoulli KL between the original and the release's logistic fits (+inf when
        the release's fit gives a probability of 0 or 1), whether R's ``glm`` reports the fit
        converged, and whether the release separates the data (no finite MLE).
        A released model (OPM, the private GLM) is its own fit."""
        source = original.part("source")
        x = self.records(source)[:, :P]
        p = self.original_probabilities(source)
        if release.kind == "model":
            beta, ok = release.sets.coefficients, release.sets.converged
            separated = np.zeros(np.shape(ok), dtype=bool)
        else:
            v = release.sets.values  # (R, M, n, 11)
            beta, ok, separated = glm_logistic(v[..., :P], v[..., P])
        kl = mean_bernoulli_kl(p, logistic_probabilities(x, beta))
        return {"logistic_kl": kl, "logistic_unconverged": (~ok).astype(float),
                "logistic_separated": separated.astype(float)}

    def evaluations(self):
        return [MetricEvaluation("logistic", self.logistic_kl, kinds=("records", "model"),
                                 names=("logistic_kl", "logistic_unconverged",
                                        "logistic_separated"))]

    # --- methods -------------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        if name == "dip":
            kinds = self.config["dip_columns"]
            params["columns"] = [kinds[c] for c in COLUMNS]
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = BankMarketing
