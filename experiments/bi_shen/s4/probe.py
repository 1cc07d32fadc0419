"""Why the record-level cross-validation fails on a DIP release (report, S4): one replicate of
S4's chain network (main text §2.2.1, Table 1; spec 004 §3 S4), NP and DIP at the three hold-out
shares, ε = 1, fitted outside the sweep engine. DIP at 35 % also shows where Table 1's chain cell
at 35 % falls on our penalty grid (report, S4).

For every release (NP's original records and each DIP release):

* ``clusters``: the release clustered as the grouped CV does
  (:func:`harness.inference.glasso.near_duplicate_groups`, single linkage cut at
  ``duplicate_share`` × the median pairwise distance): the number of clusters beside the number
  of rows the release resamples (the hold-out's m for DIP, N for NP), the largest distance inside
  a cluster, the smallest between clusters and the median pairwise distance;
* ``penalty_path``: at every penalty ρ of the CV grid, the entropy loss and mean diagonal of the
  glasso fitted on the whole release (what a CV would pick if it knew Ω) and the held-out
  negative log-likelihood of each CV reading (``records``: folds dealt record by record, S3's;
  ``near_duplicates``: clusters kept in one fold, S4's);
* ``choice``: the grid's best penalty and its loss (``grid_best``) and the penalty each CV
  reading picks, with the loss and mean Ω̂ diagonal of its refit, beside the true Ω's mean
  diagonal;
* ``timing`` (when ``settings["timing"]``): process CPU seconds of NP's cross-validated fit
  solved as a cold batch and as a warm-started path, measured in this run (they depend on the
  machine and its load, unlike the other tables).

The study's own code makes the data and releases (``conf/study/bi_shen_s4.yaml`` at
``profile=paper``, the roster labels ``DIP_15``, ``DIP_25``, ``DIP_35``) and its glasso
settings (grid, folds, tolerance); seeds derive from the root seed (:func:`harness.rng.generator`,
streams named after this computation). ``harness report paper=bi_shen
--studies=bi_shen_s4_probe`` collects it (``paper.py``)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy.spatial.distance import pdist, squareform
from threadpoolctl import threadpool_limits

from harness import config
from harness.data import Original
from harness.engine.study import load_study
from harness.inference.glasso import (
    covariance,
    entropy_loss,
    glasso_cv,
    graphical_lasso,
    near_duplicate_groups,
)
from harness.rng import generator

from ..tables import tidy

NAME = "bi_shen_s4_probe"
#: the CV readings compared (experiments/bi_shen/s3/study.py, CV_GROUPS)
READINGS = ("records", "near_duplicates")
SETTINGS = {
    "seed": 0, "N": 200, "p": 250, "network": "chain", "epsilon": 1.0,
    "methods": ("NP", "DIP_15", "DIP_25", "DIP_35"),
    # the study's grouped-CV cut (conf/study/bi_shen_s4.yaml, glasso.duplicate_share)
    "duplicate_share": 0.25,
    "timing": True,
}


def _study():
    return load_study(config.load(["study=bi_shen_s4", "profile=paper"])["study"])


def cluster_row(x: np.ndarray, share: float, source_rows: int) -> dict:
    """The near-copy clusters of records x (n, p) at ``share`` (see the module docstring)."""
    labels = near_duplicate_groups(x, share)
    d = squareform(pdist(x))
    same = labels[:, None] == labels[None, :]
    off = ~np.eye(len(x), dtype=bool)
    within = d[same & off]
    return {"rows": len(x), "source_rows": source_rows, "clusters": int(labels.max()) + 1,
            "largest_within": float(within.max()) if within.size else 0.0,
            "smallest_between": float(d[~same].min()),
            "median_distance": float(np.median(pdist(x))),
            "cut": share * float(np.median(pdist(x)))}


def _mean_diagonal(a) -> np.ndarray:
    return np.diagonal(a, axis1=-2, axis2=-1).mean(axis=-1)


def _release(study, label, scenario, data, settings):
    """The released records (n, p) of ``label`` on the replicate's data, and its source rows."""
    synth = study.method(label, scenario)
    rng = generator(settings["seed"], NAME, label, "release")
    eps = float(settings["epsilon"]) if synth.private else None
    x = synth.release(data, eps, rng).sets.values[0, 0]
    share = study.roster_entry(label)[1].get("holdout_share")
    return x, int(settings["N"]) if share is None else round(share * int(settings["N"]))


def probe_release(study, label, x, omega, settings) -> tuple[list, list]:
    """The ``penalty_path`` and ``choice`` rows of one release ``x`` (n, p)."""
    opts = study.solver_options()
    tol = {k: opts[k] for k in ("tol", "max_iter") if k in opts}
    grid = study.penalties()
    folds = int(study.config["glasso"]["folds"])
    whole, _ = graphical_lasso(np.broadcast_to(covariance(x), (grid.size, *omega.shape)),
                               grid, **tol)
    loss = entropy_loss(omega, whole)[0]
    path = pd.DataFrame({"method": label, "penalty": grid, "entropy_loss": loss,
                         "mean_diagonal": _mean_diagonal(whole)})
    best = int(np.argmin(loss))
    choice = [{"method": label, "reading": "grid_best", "penalty": grid[best],
               "entropy_loss": loss[best], "mean_diagonal": _mean_diagonal(whole[best])}]
    for reading in READINGS:
        groups = (near_duplicate_groups(x, float(settings["duplicate_share"]))
                  if reading == "near_duplicates" else None)
        rng = generator(settings["seed"], NAME, label, "cv")  # the same draw for both readings
        fit = glasso_cv(x, rng, grid=grid, folds=folds, groups=groups, **opts)
        path[f"cv_loss_{reading}"] = fit.cv_loss
        choice.append({"method": label, "reading": reading, "penalty": float(fit.penalty),
                       "entropy_loss": float(entropy_loss(omega, fit.precision)[0]),
                       "mean_diagonal": float(_mean_diagonal(fit.precision)),
                       "converged": bool(fit.converged)})
    return path.to_dict("records"), choice


def cv_seconds(study, x, seed) -> list[dict]:
    """Process CPU seconds of the cross-validated fit of ``x`` as a cold batch and as a warm
    path (the study's other glasso settings; record-level folds)."""
    opts = study.solver_options()
    rows = []
    for warm in (False, True):
        start = time.process_time()
        glasso_cv(x, generator(seed, NAME, "timing"), grid=study.penalties(),
                  folds=int(study.config["glasso"]["folds"]), **{**opts, "warm_start": warm})
        rows.append({"method": "NP", "solver": "warm_path" if warm else "cold_batch",
                     "cpu_seconds": time.process_time() - start})
    return rows


def make_tables(settings=SETTINGS, log=print) -> dict[str, pd.DataFrame]:
    """The probe's tables (module docstring) for ``settings``, computed on one BLAS thread as
    the sweep engine's tasks are (bit-for-bit results; CPU seconds of one core), floats to 5
    significant digits (:func:`experiments.bi_shen.tables.tidy`)."""
    with threadpool_limits(limits=1):
        return {name: tidy(t) for name, t in _make_tables(settings, log).items()}


def _make_tables(settings, log) -> dict[str, pd.DataFrame]:
    study = _study()
    scenario = {"N": int(settings["N"]), "p": int(settings["p"]), "network": settings["network"]}
    original = Original.of(study.generate(scenario, generator(settings["seed"], NAME, "data"), 1))
    omega = original.part("precision")[0]
    clusters, paths, choices = [], [], []
    for label in settings["methods"]:
        x, source = _release(study, label, scenario, original.train, settings)
        clusters.append({"method": label, **cluster_row(x, float(settings["duplicate_share"]),
                                                        source)})
        path, choice = probe_release(study, label, x, omega, settings)
        paths += path
        choices += choice
        log(f"{NAME}: {label} done")
    choice = pd.DataFrame(choices).assign(omega_mean_diagonal=float(_mean_diagonal(omega)))
    tables = {"clusters": pd.DataFrame(clusters), "penalty_path": pd.DataFrame(paths),
              "choice": choice}
    if settings.get("timing"):
        x = original.train.values[0]
        tables["timing"] = pd.DataFrame(cv_seconds(study, x, settings["seed"]))
    return tables


def main() -> None:  # pragma: no cover - a command
    for name, table in make_tables().items():
        print(f"\n{name}\n{table.to_string(index=False)}")


if __name__ == "__main__":  # pragma: no cover
    main()
