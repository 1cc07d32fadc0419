"""Bi & Shen, benchmark R3 (Table 3 "MovieLens" and its appendix; spec 004 §4 R3): collaborative
filtering by matrix factorisation on privatized ratings.

One fixed set of ratings: the user's GroupLens ``ratings.csv`` when ``data_csv`` names one
(:func:`.data.load_ratings_csv`), otherwise the scaled-down stand-in
(:func:`.data.standin_ratings`; its assumptions are labelled there). Each replicate is one of the
paper's random partitions: 75 % of the ratings train, 25 % test (drawn with the data, so every
method of a replicate sees the same partition). All ratings are treated as draws of one
univariate distribution; only the rating is privatized, the (user, item) pairs are released as
they are (the paper's protocol). The data user fits a matrix-factorisation model by SGD
(:func:`harness.inference.matrix_factorisation.mf_sgd`, biased Funk-SVD) on the released
training ratings, and the metric is the RMSE of its predictions (clipped to [0.5, 5]) on the
original test ratings. The paper tunes R ``recosystem`` by cross-validation (App. S2, MovieLens
paragraph): with ``mf.cv`` the settings listed there are chosen by k-fold CV on each release's
training ratings (:func:`harness.inference.matrix_factorisation.mf_cv`); without it the MF
settings are the config's fixed ones (the profile=paper run: CV multiplies the fits per
release by folds × settings + 1, which does not fit this machine at 40 partitions).

Methods (spec §2, §4 R3; every constant in ``conf/study/bi_shen_r3.yaml``):

* NP: the original training ratings;
* DIP_15, DIP_25, DIP_35: a hold-out of round(h·n_train) training ratings (drawn with the data)
  is the reference Ĉ of the univariate DIP (ratings continualized on the public half-star grid,
  a₀ = 0, spec §1.7); **only the other training ratings train the model** (the paper's
  protocol). The study hands the hold-out to the ``dip`` synthesizer as its reference part and
  drops the hold-out rows from the release before fitting: the univariate DIP privatizes each
  record given the reference alone, so the kept rows have exactly the distribution of
  Algorithm 1's release (the hold-out rows' own privatized values are never used);
* LRM: Laplace(4.5/ε) on every rating (Δ = the public range 4.5), rounded to the grid;
* OPM: the ℓ2-ball mechanism on the training ratings as one vector (d = n, radius 4.5·√n, spec
  §2), rounded to the grid (spec A16);
* EXM: every training rating redrawn from the observed values with P(a) ∝ exp(ε·count(a)/(2Δ)),
  Δ = the sample maximum (5), ε each draw's ε as the paper sets it (so a release spends n·ε;
  :mod:`experiments.bi_shen.exm`)."""

from __future__ import annotations

import functools

import numpy as np

from harness import rng as rng_mod
from harness.data import Original, RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError
from harness.evaluation import MetricEvaluation
from harness.inference.matrix_factorisation import mf_cv, mf_sgd_many
from harness.metrics.accuracy import rmse
from harness.synthesizers import make_synthesizer
from harness.validation import check_number

from ..exm import make_exm
from ..sources import check_csv_source, data_csv_path, source_rule
from .data import load_ratings_csv, standin_ratings

MF_KEYS = {"dim": True, "epochs": True, "batch": True, "l2": False, "lr": False}
#: the MF settings ``mf.cv`` may cross-validate
CV_KEYS = ("dim", "l2", "lr")


def _test_rmse(fit, test) -> float:
    """RMSE of a fit's predictions (clipped to [0.5, 5]) on test (n_test, 3) ratings."""
    pred = fit.predict(test[:, 0].astype(np.int64), test[:, 1].astype(np.int64),
                       clip=(0.5, 5.0))
    return rmse(pred, test[:, 2])


def holdout_label(share: float) -> str:
    return f"holdout_{round(100 * share)}"


class MovieLens(Study):
    grid_rules = {"data": source_rule}
    extra_keys = ("standin", "data_csv", "test_share", "dip_holdouts", "mf")
    data_files = {"data_csv": "csv"}  # the path selects grid.data=[csv]

    def validate(self) -> None:
        s = self.config.get("standin") or {}
        for key in ("n_users", "n_items", "seed"):
            check_number(f"study.standin.{key}", s.get(key), integer=True, minimum=0 if
                         key == "seed" else 10)
        check_number("study.standin.mean_activity", s.get("mean_activity"), minimum=5)
        check_number("study.test_share", self.config.get("test_share"), open_interval=(0, 1))
        shares = self.config.get("dip_holdouts")
        if not isinstance(shares, (list, tuple)) or not shares:
            raise ConfigError("study.dip_holdouts: give the DIP hold-out shares, e.g. [0.15]")
        for h in shares:
            check_number("study.dip_holdouts", h, open_interval=(0, 1))
        mf = self.config.get("mf") or {}
        for key, integer in MF_KEYS.items():
            check_number(f"study.mf.{key}", mf.get(key), integer=integer,
                         **({"minimum": 1} if integer else {"open_interval": (0, np.inf)}))
        self.cv_grid()  # checked now: one line, nothing written
        for label, spec in self.config["roster"].items():
            part = (spec or {}).get("public_part")
            if part is not None and part not in {holdout_label(h) for h in shares}:
                raise ConfigError(f"study.roster.{label}.public_part: {part!r} is not a hold-out "
                                  f"of study.dip_holdouts (allowed: "
                                  f"{', '.join(holdout_label(h) for h in shares)})")
        check_csv_source(self.config, "a GroupLens ratings.csv", self.ratings)

    @functools.cache  # noqa: B019 (one data set per study object and source)
    def ratings(self, source: str) -> np.ndarray:
        """(N, 3) (user, item, rating) of ``source``."""
        if source == "csv":
            return load_ratings_csv(data_csv_path(self.config))
        s = self.config["standin"]
        return standin_ratings(int(s["n_users"]), int(s["n_items"]), float(s["mean_activity"]),
                               int(s["seed"]))

    # --- data ----------------------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        """Per replicate: the train/test partition, each DIP hold-out (a subset of the training
        ratings) and the seed of the MF fits."""
        z = self.ratings(scenario["data"])
        n = z.shape[0]
        n_test = int(round(float(self.config["test_share"]) * n))
        perm = np.argsort(rng.random((n_replicates, n)), axis=1)
        train, test = z[perm[:, n_test:]], z[perm[:, :n_test]]  # (R, n_train, 3), (R, n_test, 3)
        parts = {"pairs": train[..., :2].astype(np.int64), "test": test,
                 "mf_seed": rng.integers(0, 2**63, size=n_replicates)}
        n_train = n - n_test
        for h in self.config["dip_holdouts"]:
            m = int(round(float(h) * n_train))
            rows = np.sort(np.argsort(rng.random((n_replicates, n_train)), axis=1)[:, :m], 1)
            kept = np.ones((n_replicates, n_train), dtype=bool)
            np.put_along_axis(kept, rows, False, axis=1)
            label = holdout_label(h)
            parts[label] = RecordBatch(np.take_along_axis(train[..., 2:], rows[..., None], 1),
                                       columns=("rating",))
            parts[f"kept_{m}"] = kept
        return Original(RecordBatch(train[..., 2:], columns=("rating",)), parts)

    def cv_grid(self) -> list[dict] | None:
        """The settings ``mf.cv`` cross-validates (the product of its lists of ``dim``, ``l2``,
        ``lr``), or None when the MF settings are fixed (no ``mf.cv``)."""
        cv = (self.config.get("mf") or {}).get("cv")
        if cv is None:
            return None
        if not isinstance(cv, dict) or not set(cv) <= {"folds", *CV_KEYS}:
            raise ConfigError(f"study.mf.cv: give folds and lists of some of "
                              f"{', '.join(CV_KEYS)}, got {cv!r}")
        check_number("study.mf.cv.folds", cv.get("folds"), integer=True, minimum=2)
        grid = [{}]
        for key in CV_KEYS:
            values = cv.get(key)
            if values is None:
                continue
            if not isinstance(values, (list, tuple)) or not values:
                raise ConfigError(f"study.mf.cv.{key}: give a non-empty list of values")
            for v in values:
                check_number(f"study.mf.cv.{key}", v, integer=MF_KEYS[key],
                             **({"minimum": 1} if MF_KEYS[key] else
                                {"open_interval": (0, np.inf)}))
            grid = [{**g, key: v} for g in grid for v in values]
        return grid

    # --- evaluation ----------------------------------------------------------------------------
    def test_rmse(self, original, release, scenario):
        """MF on the released training ratings (DIP: the rows outside its hold-out), RMSE on
        the original test ratings."""
        z = self.ratings(scenario["data"])
        n_users, n_items = int(z[:, 0].max()) + 1, int(z[:, 1].max()) + 1
        pairs, test = original.part("pairs"), original.part("test")
        seeds = original.part("mf_seed")
        v = release.sets.values[..., 0]  # (R, M, n_train)
        m = release.diagnostics.get("holdout_size")
        kept = None if m is None else original.part(f"kept_{int(m[0])}")
        mf = self.config["mf"]
        fixed = {"dim": int(mf["dim"]), "l2": float(mf["l2"]), "lr": float(mf["lr"]),
                 "epochs": int(mf["epochs"]), "batch": int(mf["batch"])}
        grid = self.cv_grid()
        out = np.empty(v.shape[:2])
        if grid is None:  # the replicates' fits in one pass, each on its own stream
            return {"test_rmse": self._fixed_rmse(pairs, test, seeds, v, kept, n_users,
                                                  n_items, fixed)}
        for r in range(v.shape[0]):
            rows = slice(None) if kept is None else kept[r]
            u, i = pairs[r, rows, 0], pairs[r, rows, 1]
            for j in range(v.shape[1]):
                stream = rng_mod.generator(int(seeds[r]), "mf")
                # tuned on the released training ratings, as the data user would
                fit = mf_cv(u, i, v[r, j, rows], n_users, n_items, stream, grid=grid,
                            folds=int(mf["cv"]["folds"]), clip=(0.5, 5.0), **fixed)[0]
                out[r, j] = _test_rmse(fit, test[r])
        return {"test_rmse": out}

    @staticmethod
    def _fixed_rmse(pairs, test, seeds, v, kept, n_users, n_items, fixed) -> np.ndarray:
        """(R, M) test RMSE of the fixed-setting fits: for each set j, the R replicates' fits
        by :func:`mf_sgd_many`, fit r on its stream ``generator(seeds[r], "mf")`` (bit for bit
        the fit :func:`mf_sgd` makes alone on that stream)."""
        R, M, n = v.shape
        if kept is not None:  # every replicate keeps the same number of rows
            n = int(kept[0].sum())
            pairs = pairs[kept].reshape(R, n, 2)
        out = np.empty((R, M))
        for j in range(M):
            ratings = v[:, j] if kept is None else v[:, j][kept].reshape(R, n)
            streams = [rng_mod.generator(int(s), "mf") for s in seeds]
            fits = mf_sgd_many(pairs[..., 0], pairs[..., 1], ratings, n_users, n_items,
                               streams, **fixed)
            for r, fit in enumerate(fits):
                out[r, j] = _test_rmse(fit, test[r])
        return out

    def evaluations(self):
        return [MetricEvaluation("mf", self.test_rmse, names=("test_rmse",))]

    # --- methods -------------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        if name == "exm":  # on the ε axis, per draw (the paper's) or in total (spec §2)
            return make_exm(f"study.roster.{label}", params)
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = MovieLens
