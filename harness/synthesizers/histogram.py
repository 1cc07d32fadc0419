"""Histogram synthesizers of numeric data (Bowen & Liu 2020 §3.1.2, Eqs. 5–7; spec 000 §2.2–§2.3):

* ``perturbed_histogram`` (PERT): per released set, the bin counts get Laplace noise,
  n_k* = n_k + Lap(0, Δ/ε_set) (one vector query over disjoint bins, so every bin gets the whole
  per-set budget by parallel composition), negative counts become 0, and n records are drawn
  by picking a bin with probability p̂_k* = n_k*/Σ n_k* and a point uniform within it (Eq. 5).
* ``smoothed_histogram`` (SMOOTH, Wasserman & Zhou 2010): no noise; the released records are
  drawn from f̂* = (1 − λ) f̂_K + λ · uniform on the public box (Eq. 6), λ from Eq. 7 with
  equality; one set with the whole ε by default.

Both work on d-dimensional records within G groups (a :class:`~harness.data.RecordBatch` with
``cells``: one histogram per group over the group's public box, e.g. per GLOM cell), using
:mod:`harness.histograms` for Scott's bins, counts and sampling. With G = 1 and d = 1 they are the
univariate methods of Bowen & Liu §4.2. The group label of each synthetic record is taken from the
input (the groups are public, or released by another mechanism that the caller composes).

Binning follows the paper: Scott's rule over the public bounds with the data's SD
(h = 3.5·S·n^(−1/(2+d))). That choice of K is not privacy-accounted by the paper (spec §6
item 11); ``public_sd`` computes K from a public SD instead, which makes K data-independent.
"""

from __future__ import annotations

import numpy as np

from ..data import RecordBatch, group_sums
from ..errors import ConfigError, allowed
from ..histograms import BinGrid, histogram_probabilities, scott_bins
from ..privacy import Sensitivity, laplace_mechanism, smoothed_histogram_weight
from ..privacy.ledger import ADD_REMOVE
from ..validation import check_number
from .base import Synthesizer
from .registry import register

SD_SOURCES = ("group", "pooled", "marginal")

#: diagnostics: the number of bins of the histogram (mean over groups) and SMOOTH's λ
BINS = "bins"
LAMBDA = "lambda"


def _box(value, key: str) -> np.ndarray:
    """Public bounds as an array (G, d): a number, one value per coordinate, or (G, d)."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{key}: expected a number or a list of numbers, got {value!r}") from None
    if a.ndim > 2 or a.size == 0 or not np.all(np.isfinite(a)):
        raise ConfigError(f"{key}: expected finite numbers of shape (), (d,) or (G, d)")
    return a.reshape((1,) * (2 - a.ndim) + a.shape)


class _HistogramSynthesizer(Synthesizer):
    """Shared binning of the histogram synthesizers: Scott's rule over public boxes, per group."""

    input_kind = "numeric"

    def __init__(self, lower, upper, m: int, public_sd=None, sd_source: str = "group",
                 max_bins: int | None = None):
        super().__init__(m)
        self.lower = _box(lower, "lower")
        self.upper = _box(upper, "upper")
        try:
            np.broadcast_shapes(self.lower.shape, self.upper.shape)
        except ValueError:
            raise ConfigError(
                f"upper: shape {self.upper.shape} does not match lower {self.lower.shape}"
            ) from None
        if not np.all(self.upper > self.lower):
            raise ConfigError("upper: every upper bound must exceed its lower bound")
        if sd_source not in SD_SOURCES:
            raise allowed("sd_source", sd_source, SD_SOURCES)
        self.sd_source = sd_source
        self.public_sd = None
        if public_sd is not None:
            sd = _box(public_sd, "public_sd")
            if not np.all(sd > 0):
                raise ConfigError(f"public_sd: must be > 0, got {public_sd!r}")
            self.public_sd = sd
        if max_bins is not None:
            check_number("max_bins", max_bins, integer=True, minimum=1)
        self.max_bins = max_bins

    # --- binning --------------------------------------------------------------------------------
    def _sd(self, data: RecordBatch) -> np.ndarray:
        """SD per (replicate, group, coordinate) (R, G, d) by ``sd_source``."""
        x = data.values
        if data.cells is None or self.sd_source == "marginal":
            sd = x.std(axis=-2, ddof=1)[..., None, :]
            return np.broadcast_to(sd, (*sd.shape[:-2], data.n_cells, sd.shape[-1]))
        n_g = data.cell_counts().astype(float)[..., None]  # (R, G, 1)
        s1 = group_sums(x, data.cells, data.n_cells)
        mean = s1 / np.maximum(n_g, 1.0)
        dev = x - np.take_along_axis(mean, data.cells[..., None], axis=-2)
        ss = group_sums(dev * dev, data.cells, data.n_cells)  # (R, G, d)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.sd_source == "pooled":
                pooled = ss.sum(axis=-2, keepdims=True) / (data.n - data.n_cells)
                return np.broadcast_to(np.sqrt(pooled), ss.shape)
            return np.sqrt(ss / (n_g - 1.0))

    def bin_grid(self, data: RecordBatch) -> BinGrid:
        """Scott's bins over the public box of every group, per replicate (Bowen & Liu §4.2)."""
        lead = data.batch_shape
        shape = (*lead, data.n_cells, data.n_columns)
        lower = np.broadcast_to(self.lower, shape)
        upper = np.broadcast_to(self.upper, shape)
        sd = self._sd(data) if self.public_sd is None else np.broadcast_to(self.public_sd, shape)
        bins = scott_bins(sd, data.cell_counts(), lower, upper, max_bins=self.max_bins)
        return BinGrid(lower, upper, bins)

    def _check_data(self, data) -> None:
        if not isinstance(data, RecordBatch):
            raise ConfigError(f"data: {self.name} synthesizes numeric records (a RecordBatch)")
        g = self.lower.shape[0] if self.lower.shape[0] > 1 else self.upper.shape[0]
        if g > 1 and g != data.n_cells:
            raise ConfigError(f"lower: bounds are given for {g} groups, the data have "
                              f"{data.n_cells}")

    @staticmethod
    def _draw(grid: BinGrid, probs: np.ndarray, data: RecordBatch, rng) -> np.ndarray:
        """n records per data set from the bin probabilities: pick a bin, then a point uniform
        within it. Without groups the bin counts are drawn as one multinomial per set (records
        ordered by bin; synthetic records are exchangeable, and ``synthesize`` shuffles them)."""
        if data.cells is None:
            return grid.sample(probs, None, rng, n=data.n, exchangeable=True)
        return grid.sample(probs, data.cells, rng)

    def _record_batch(self, x: np.ndarray, data: RecordBatch) -> RecordBatch:
        return RecordBatch(x, data.cells, data.n_cells, data.columns)


@register
class PerturbedHistogram(_HistogramSynthesizer):
    """Perturbed histogram (PERT; Bowen & Liu §3.1.2 Eq. 5 and §4.2): Laplace-noised bin counts,
    one sanitization per released set with ε/m, bin then uniform within the bin."""

    name = "perturbed_histogram"

    def __init__(self, lower, upper, m: int = 5, sensitivity: float = 1.0, public_sd=None,
                 sd_source: str = "group", max_bins: int | None = None):
        super().__init__(lower, upper, m, public_sd, sd_source, max_bins)
        self.sensitivity = float(check_number("sensitivity", sensitivity, minimum=None,
                                              open_interval=(0, np.inf)))

    def sensitivities(self) -> list[Sensitivity]:
        """The bin counts' Δ, declared under add/remove (2Δ under substitution)."""
        return [Sensitivity.declared(self.sensitivity, ADD_REMOVE)]

    def sanitize(self, counts: np.ndarray, epsilon_set: float, ledger, rng,
                 statistic: str = "bin counts") -> np.ndarray:
        """n_k* = n_k + Lap(0, Δ/ε_set) for every bin of every group: one vector query over a
        partition of the records (Δ is its l1 sensitivity: 1 for add/remove neighbours, the
        paper's convention; 2 for substitution neighbours with n public)."""
        return laplace_mechanism(counts, sensitivity=self.sensitivities()[0], epsilon=epsilon_set,
                                 rng=rng, ledger=ledger, statistic=statistic)

    def _release(self, data, epsilon, ledger, rng):
        self._check_data(data)
        grid = self.bin_grid(data)
        counts = grid.counts(data.values, data.cells)
        valid = grid.valid()
        eps_set = self.set_budget(epsilon)
        parts = []
        for j in range(self.m):
            noisy = self.sanitize(counts, eps_set, ledger, rng, f"set {j + 1}: bin counts")
            probs = histogram_probabilities(noisy, valid)
            parts.append(self._record_batch(self._draw(grid, probs, data, rng), data))
        bins = grid.total.mean(axis=-1).astype(float)
        return RecordBatch.stack_sets(parts), {BINS: bins}


@register
class SmoothedHistogram(_HistogramSynthesizer):
    """Smoothed histogram (SMOOTH; Wasserman & Zhou 2010; Bowen & Liu §3.1.2 Eqs. 6–7 and §4.2):
    records from (1 − λ)·histogram + λ·uniform, λ = K/(K + n(e^{ε/n} − 1)); one set, full ε."""

    name = "smoothed_histogram"

    def __init__(self, lower, upper, m: int = 1, public_sd=None, sd_source: str = "group",
                 max_bins: int | None = None):
        super().__init__(lower, upper, m, public_sd, sd_source, max_bins)

    def _release(self, data, epsilon, ledger, rng):
        self._check_data(data)
        grid = self.bin_grid(data)
        counts = grid.counts(data.values, data.cells)  # (R, G, size)
        valid = grid.valid()
        n_g = data.cell_counts().astype(float)  # (R, G)
        k = grid.total.astype(float)  # (R, G)
        eps_set = self.set_budget(epsilon)
        with np.errstate(divide="ignore", invalid="ignore"):
            p_hat = np.where(n_g[..., None] > 0, counts / n_g[..., None], valid / k[..., None])
        parts, lams = [], []
        for j in range(self.m):
            # disjoint groups: one weight per group, composed in parallel (one ledger entry);
            # the group sizes n_g are treated as public (as the group labels are, see above)
            lam = smoothed_histogram_weight(np.maximum(n_g, 1.0), k, epsilon=eps_set,
                                            ledger=ledger, statistic=f"set {j + 1}: histogram")
            probs = np.where(valid, (1 - lam[..., None]) * p_hat + (lam / k)[..., None], 0.0)
            parts.append(self._record_batch(self._draw(grid, probs, data, rng), data))
            lams.append(lam.mean(axis=-1))
        bins = grid.total.mean(axis=-1).astype(float)
        return RecordBatch.stack_sets(parts), {BINS: bins, LAMBDA: np.stack(lams, axis=1)}
