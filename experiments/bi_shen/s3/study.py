"""Bi & Shen, simulation S3 (appendix "Gaussian graphical models"; spec 004 §3 S3, §7.2): the
precision matrix of a low-dimensional Gaussian graphical model.

Per replicate: N records from N_p(0, Σ) (the appendix's "unknown multivariate normal F"), with
one of the paper's two networks:

* ``chain``: Σ_kl = exp(−0.5|τ_k − τ_l|), τ_1 = 0 and τ_l − τ_{l−1} ~ Unif(0.5, 1), so Ω = Σ⁻¹
  is tridiagonal (AR(1)-like); τ is redrawn in every replicate (spec §3 S3 resolution, A27);
* ``exp_decay``: Ω_kl = exp(−2|k − l|) (dense), Σ = Ω⁻¹, the same in every replicate.

The data user estimates Ω by the graphical lasso with the diagonal penalised (R ``glasso``'s
default) and 5-fold cross-validation (:func:`harness.inference.glasso.glasso_cv`; penalty grid
and CV loss spec A24), and the metric is the entropy loss EL(Ω, Ω̂) = tr(Ω⁻¹Ω̂) − log|Ω⁻¹Ω̂| − p
against the replicate's true Ω (slogdet; a "naive" det that underflows is counted, A25). The CV
folds of a replicate come from the data stream (a seed drawn with the data), so every method and
ε of a replicate is scored with the same fold draw (common random numbers). The folds are dealt
record by record (``glasso.cv_groups: records``, S3's setting) or with near copies of a record
kept in one fold (``near_duplicates``, S4's;
:func:`harness.inference.glasso.near_duplicate_groups`).

Numerics: the records are fitted as released, at their own scale (NOPM's values have an SD of
thousands): the graphical lasso solves each problem on its scale-normalised covariance and its
stopping rule is relative (:mod:`harness.inference.glasso`), so Θ̂ ≈ S⁻¹ is found, not the zero
matrix an absolute tolerance stopped at before.

Methods (spec §2, §7.2; every constant in ``conf/study/bi_shen_s3.yaml``):

* NP: the original N records (roster ``ori``);
* DIP_15, DIP_25, DIP_35: the hold-out share h (roster ``holdout_share``) is split off
  (m = round(h·N)), the other n = N − m records are privatized by the cube DIP (Algorithm 1),
  every column at ε/p;
* NLRM: each column with Laplace(2·max|Z_j|·p/ε) (the symmetric support rule, spec §2);
* NOPM: each column as one vector in the ℓ2 ball of radius √n·max|Z_j| (d = n, A12) at ε/p.

Unlike S5 the hold-out share is a roster setting, not a grid axis: the glasso fits cost the
sweep, and an axis that only DIP reads would run NP, NLRM and NOPM three times per
(p, network); the three DIP entries also see the same data sets (paired comparisons)."""

from __future__ import annotations

import numpy as np

from harness import rng as rng_mod
from harness.data import Original, RecordBatch
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.evaluation import MetricEvaluation
from harness.inference.glasso import (
    cv_folds,
    entropy_loss,
    glasso_cv,
    near_duplicate_groups,
)
from harness.synthesizers import make_synthesizer

NETWORKS = ("chain", "exp_decay")
#: how the CV deals records to folds: one by one, or clusters of near copies together
#: (:func:`harness.inference.glasso.near_duplicate_groups`; report, S4)
CV_GROUPS = ("records", "near_duplicates")


def _network(key, value):
    if value not in NETWORKS:
        raise allowed(key, value, NETWORKS)


def chain_covariance(tau: np.ndarray, rate: float) -> np.ndarray:
    """Σ_kl = exp(−rate·|τ_k − τ_l|) of positions τ (..., p) (the chain network)."""
    return np.exp(-rate * np.abs(tau[..., :, None] - tau[..., None, :]))


def exp_decay_precision(p: int, rate: float) -> np.ndarray:
    """Ω_kl = exp(−rate·|k − l|) (the exponential-decay network)."""
    k = np.arange(p)
    return np.exp(-rate * np.abs(k[:, None] - k[None, :]))


class GaussianGraphicalModel(Study):
    grid_rules = {"N": {"integer": True, "minimum": 20}, "p": {"integer": True, "minimum": 2},
                  "network": _network}
    extra_keys = ("chain", "exp_decay", "glasso")

    def validate(self) -> None:
        chain = self.config.get("chain") or {}
        gap = chain.get("gap")
        if not (isinstance(gap, (list, tuple)) and len(gap) == 2
                and all(isinstance(g, (int, float)) for g in gap) and 0 < gap[0] < gap[1]):
            raise ConfigError(f"study.chain.gap: give [low, high] with 0 < low < high, got "
                              f"{gap!r}")
        for key, value in (("chain.rate", chain.get("rate")),
                           ("exp_decay.rate", (self.config.get("exp_decay") or {}).get("rate"))):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"study.{key}: must be a number > 0, got {value!r}")
        g = self.config.get("glasso") or {}
        folds = g.get("folds")
        if not isinstance(folds, int) or isinstance(folds, bool) or folds < 2:
            raise ConfigError(f"study.glasso.folds: must be an integer >= 2, got {folds!r}")
        for key, kind in (("tol", (int, float)), ("max_iter", int), ("polish_tol", (int, float))):
            value = g.get(key)  # optional: the solver's stopping rule (default: its own)
            if value is not None and (isinstance(value, bool) or not isinstance(value, kind)
                                      or value <= 0):
                raise ConfigError(f"study.glasso.{key}: must be "
                                  f"{'an integer' if kind is int else 'a number'} > 0 or null, "
                                  f"got {value!r}")
        cv_groups = g.get("cv_groups", "records")
        if cv_groups not in CV_GROUPS:
            raise allowed("study.glasso.cv_groups", cv_groups, CV_GROUPS)
        share = g.get("duplicate_share")
        if cv_groups == "near_duplicates" and not (
                isinstance(share, (int, float)) and not isinstance(share, bool) and 0 < share < 1):
            raise ConfigError(f"study.glasso.duplicate_share: must be a number in (0, 1) with "
                              f"cv_groups=near_duplicates, got {share!r}")
        for key in ("warm_start", "screen"):
            if not isinstance(g.get(key, False), bool):
                raise ConfigError(f"study.glasso.{key}: must be true or false, got "
                                  f"{g.get(key)!r}")
        ratio = g.get("balance_ratio")
        if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float))
                                  or not ratio > 1):
            raise ConfigError(f"study.glasso.balance_ratio: must be a number > 1 or null, got "
                              f"{ratio!r}")
        grid = g.get("penalties") or {}
        low, high, count = grid.get("low"), grid.get("high"), grid.get("count")
        if not (all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high))
                and 0 < low <= high and isinstance(count, int) and count >= 1):
            raise ConfigError(f"study.glasso.penalties: give {{low, high, count}} with "
                              f"0 < low <= high and count >= 1, got {grid!r}")

    def penalties(self) -> np.ndarray:
        """The log-spaced penalty grid ρ of the cross-validation (spec A24)."""
        g = self.config["glasso"]["penalties"]
        return np.geomspace(float(g["low"]), float(g["high"]), int(g["count"]))

    # --- data ----------------------------------------------------------------------------------
    def covariance_and_precision(self, network: str, p: int, rng, n_replicates: int):
        """(Σ, Ω), each (R, p, p), of the replicates' networks (chain: τ redrawn per replicate)."""
        if network == "chain":
            c = self.config["chain"]
            gaps = rng.uniform(c["gap"][0], c["gap"][1], (n_replicates, p - 1))
            tau = np.concatenate([np.zeros((n_replicates, 1)), np.cumsum(gaps, axis=1)], axis=1)
            sigma = chain_covariance(tau, c["rate"])
            omega = np.linalg.inv(sigma)
        else:
            omega1 = exp_decay_precision(p, self.config["exp_decay"]["rate"])
            omega = np.broadcast_to(omega1, (n_replicates, p, p)).copy()
            sigma = np.broadcast_to(np.linalg.inv(omega1), (n_replicates, p, p)).copy()
        return sigma, 0.5 * (omega + np.swapaxes(omega, 1, 2))

    def generate(self, scenario, rng, n_replicates):
        n, p = int(scenario["N"]), int(scenario["p"])
        sigma, omega = self.covariance_and_precision(scenario["network"], p, rng, n_replicates)
        z = rng.standard_normal((n_replicates, n, p))
        x = z @ np.swapaxes(np.linalg.cholesky(sigma), 1, 2)  # rows ~ N(0, Σ)
        cv_seed = rng.integers(0, 2**63, size=n_replicates)
        columns = tuple(f"x{j + 1}" for j in range(p))
        return Original(RecordBatch(x, columns=columns),
                        {"precision": omega, "cv_seed": cv_seed})

    # --- evaluation ----------------------------------------------------------------------------
    #: the metrics of the evaluation ``glasso``, per released set (:meth:`set_metrics`)
    METRICS = ("entropy_loss", "naive_det_underflow")

    def solver_options(self) -> dict:
        """The ADMM stopping rule of the glasso fits: ``glasso.tol`` and ``glasso.max_iter``
        when the config sets them, else the solver's defaults; ``glasso.warm_start`` (default
        false): solve the CV's penalties as a warm-started path; ``glasso.polish_tol`` (default
        none): the ADMM runs to this looser tolerance and Newton's method finishes each problem
        exactly on its support (:func:`harness.inference.glasso.graphical_lasso`);
        ``glasso.screen`` (default true) and ``glasso.balance_ratio`` (default the solver's):
        exact covariance screening and μ's residual balancing; ``screen: false,
        balance_ratio: 10`` is the former solver, bit for bit (the report's S4 solver bench)."""
        g = self.config["glasso"]
        return {k: g[k] for k in ("tol", "max_iter", "warm_start", "polish_tol", "screen",
                                  "balance_ratio")
                if g.get(k) is not None}

    def cv_fold_labels(self, records, seed: int) -> np.ndarray:
        """The CV folds (M, n) of the M released sets (M, n, p) of one replicate, the sets
        drawing their folds in turn from the replicate's fold stream (common random numbers
        across methods and ε)."""
        rng = rng_mod.generator(seed, "glasso_cv")
        g = self.config["glasso"]
        groups = None
        if g.get("cv_groups", "records") == "near_duplicates":
            groups = near_duplicate_groups(records, float(g["duplicate_share"]))
        return cv_folds(np.shape(records), rng, int(g["folds"]), groups)

    def glasso_fit(self, records, seeds):
        """The k-fold CV graphical lasso (diagonal penalised) of released sets ``records``
        (M, n, p) of one replicate with fold seed ``seeds``, or (R, M, n, p) of R replicates with
        seeds (R,) (:class:`harness.inference.glasso.GlassoCV`): every replicate's folds come
        from its own fold stream (:meth:`cv_fold_labels`) and all the sets' problems are solved
        in one batch (per chunk; the estimates are those of one fit per replicate)."""
        records = np.asarray(records, dtype=float)
        if records.ndim == 3:
            fold = self.cv_fold_labels(records, int(seeds))
        else:
            fold = np.stack([self.cv_fold_labels(x, int(s))
                             for x, s in zip(records, seeds, strict=True)])
        return glasso_cv(records, grid=self.penalties(),
                         folds=int(self.config["glasso"]["folds"]), fold=fold,
                         **self.solver_options())

    def estimate_precision(self, records, seed: int) -> np.ndarray:
        """Ω̂ (M, p, p) of the M released sets (M, n, p) of one replicate."""
        return self.glasso_fit(records, seed).precision

    def set_metrics(self, omega, fit) -> dict[str, np.ndarray]:
        """The metrics (each of the fit's leading shape, e.g. (M,) or (R, M)) of fits against
        the true Ω (broadcasting to the fits' precisions): the entropy loss and whether
        det(Ω⁻¹Ω̂) computed directly underflows (spec A25)."""
        loss, underflow = entropy_loss(omega, fit.precision)
        return {"entropy_loss": loss, "naive_det_underflow": underflow}

    def glasso_entropy_loss(self, original, release, scenario):
        """5-fold CV graphical lasso on every released set, entropy loss against the true Ω; the
        replicates' fits solved together (:meth:`glasso_fit`)."""
        v = release.sets.values  # (R, M, n, p)
        omega, seeds = original.part("precision"), original.part("cv_seed")
        values = self.set_metrics(omega[:, None], self.glasso_fit(v, seeds))
        return {name: np.asarray(values[name], dtype=float) for name in self.METRICS}

    def evaluations(self):
        return [MetricEvaluation("glasso", self.glasso_entropy_loss, names=self.METRICS)]

    # --- methods -------------------------------------------------------------------------------
    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        return make_synthesizer(name, key=f"study.roster.{label}", **params)


STUDY_CLASS = GaussianGraphicalModel
