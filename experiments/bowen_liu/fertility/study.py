"""Bowen & Liu (2020) case study (§5, Tables 3–5; spec 000 §4.5, §6 item 24): UCI Fertility.

The 100 records are split once (seeded, stratified: 3 altered and 17 normal test cases, Table 4)
into 80 training and 20 test records. Every repetition releases one synthetic set of the 80
training records at ε = e (or the PrivateSVM weights), trains a linear SVM on it and scores it on
the same 20 test cases; Table 5 summarises age and hours and the total variation distance of all
1-, 2-, 3- and 8-way tables of the 8 categorical variables.

Methods (all constants in ``conf/study/bowen_liu_fertility.yaml``):
* **LAP**: the full cross-tabulation of the 8 categorical variables (2,880 cells) × the 2-D
  Scott histogram of (age, hours) (``harness.histograms``), Laplace noise on *every* cell
  (``laplace_sanitizer``), negative counts to 0, n = 80 records by largest remainder, age and
  hours uniform within their bin.
* **MODIPS**: saturated log-linear model on the same table = Dirichlet-multinomial
  (``modips`` with ``DirichletMultinomial``, α = 1/2 per cell, spec §6 item 24), n* floored at 0.
* **PrivateSVM**: ``harness.synthesizers.private_svm`` (Rubinstein et al. 2009, Alg. 2).
* **Ori**: the training records.
* ``noise_scope: nonempty`` variants perturb only the cells that are non-empty in the training
  data. That is **not DP** (the set of perturbed cells reveals the data); they are a diagnostic
  for spec §6 item 24 REVIEW (b), labelled as such everywhere.

The table is held as cell counts and vectorised over replicates, in chunks of
``chunk_replicates`` replicates to bound memory (≈ 115,200 cells per replicate).
The results are per-replicate metrics of one metric evaluation, not interval estimands.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools

import numpy as np

from harness.data import CountBatch, RecordBatch, group_sums
from harness.engine.study import Study
from harness.errors import ConfigError, allowed
from harness.evaluation import MetricEvaluation
from harness.histograms import BinGrid, scott_bins
from harness.models import DirichletMultinomial
from harness.privacy import PrivacyLedger
from harness.synthesizers import Synthesizer, make_synthesizer
from harness.synthesizers.private_svm import require_sklearn

from ...common import as_number
from .data import (
    CATEGORICAL,
    FEATURES,
    FertilityData,
    load_fertility,
    split,
)

BOUNDS = {  # public (age, hours) boxes: spec §6 item 24 ([0, 1]²) and REVIEW (a) (Table 3)
    "unit": ((0.0, 0.0), (1.0, 1.0)),
    "table3": ((18 / 36, 1 / 16), (1.0, 1.0)),
}
NOISE_SCOPES = ("all", "nonempty")
TVD_REFERENCES = ("train", "full")
TABLE_SYNTHESIZERS = ("laplace_sanitizer", "modips")
LEVELS = (*CATEGORICAL.values(), (0.0, 1.0))  # the 8 categorical variables' codes
SHAPE = tuple(len(v) for v in LEVELS)  # (4, 2, 2, 2, 3, 5, 3, 2): 2,880 cells
CONTINUOUS_COLUMNS = (FEATURES.index("age"), FEATURES.index("hours"))
CATEGORICAL_COLUMNS = tuple(FEATURES.index(v) for v in CATEGORICAL) + (len(FEATURES),)
ORDERS = (1, 2, 3, 8)
NOT_DP_NOTE = ("NOT DP: only the cells non-empty in the data were perturbed, which reveals them "
               "(a diagnostic, spec 000 §6 item 24 REVIEW b)")
METRICS = ("tp", "fn", "fp", "tn", "consistency_rate", "cv_accuracy", "age_mean", "age_sd",
           "hours_mean", "hours_sd", *(f"tvd_{k}" for k in ORDERS))


class TableCodec:
    """Records (age and hours continuous, 8 categorical variables) ↔ cells of the full table
    (categorical cell × 2-D bin). Bins: Scott's rule over the public box with the training SDs
    (the paper's choice; the SDs are not privacy-accounted, spec §6 item 11)."""

    def __init__(self, train: FertilityData, bounds: str):
        lower, upper = (np.asarray(b, dtype=float) for b in BOUNDS[bounds])
        cont = train.features[:, CONTINUOUS_COLUMNS]
        bins = scott_bins(cont.std(axis=0, ddof=1), train.n, lower, upper)
        self.grid = BinGrid(lower[None], upper[None], bins[None])  # one group
        self.bins = tuple(int(b) for b in bins)
        self.n_bins = int(np.prod(bins))
        self.n_categorical = int(np.prod(SHAPE))
        self.n_cells = self.n_categorical * self.n_bins
        # one box per bin, to draw a point uniform within a given bin (BinGrid.sample)
        width = (upper - lower) / bins
        corner = np.stack(np.unravel_index(np.arange(self.n_bins), self.bins), axis=-1)
        lo = lower + corner * width
        self._per_bin = BinGrid(lo, lo + width, np.ones_like(corner))

    def cells(self, values: np.ndarray) -> np.ndarray:
        """Full-table cell of records ``values`` (..., n, 10) (FEATURES + diagnosis)."""
        codes = [np.argmin(np.abs(values[..., c, None] - np.asarray(lv)), axis=-1)
                 for c, lv in zip(CATEGORICAL_COLUMNS, LEVELS, strict=True)]
        cat = np.ravel_multi_index(codes, SHAPE)
        b = self.grid.counts  # bins are located by the histogram module
        cont = values[..., CONTINUOUS_COLUMNS]
        lead = cont.shape[:-2]
        onehot = b(cont.reshape(-1, 1, 2))  # (records, 1, n_bins): one record per "data set"
        bin_index = onehot.reshape(-1, self.n_bins).argmax(axis=-1).reshape(*lead, -1)
        return cat * self.n_bins + bin_index

    def decode(self, cells: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Records (..., n, 10) of full-table cells (..., n): categorical codes from the cell, age
        and hours uniform within the cell's bin (spec §6 item 24)."""
        cat, b = np.divmod(cells, self.n_bins)
        codes = np.unravel_index(cat, SHAPE)
        out = np.empty((*cells.shape, len(FEATURES) + 1))
        for c, lv, code in zip(CATEGORICAL_COLUMNS, LEVELS, codes, strict=True):
            out[..., c] = np.asarray(lv)[code]
        probs = np.ones((*cells.shape[:-1], self.n_bins, 1))
        out[..., CONTINUOUS_COLUMNS] = self._per_bin.sample(probs, b, rng)
        return out


class TableSynthesizer(Synthesizer):
    """Releases mixed records through a cell-count synthesizer of the full table: tabulate,
    release the table with ``inner`` (LAP or MODIPS), expand the released counts into records
    (``TableCodec.decode``). ``noise_scope="nonempty"`` hands the inner synthesizer only the
    cells that are non-empty in the batch (NOT DP: a diagnostic, spec §6 item 24 REVIEW (b))."""

    name = "table_records"

    def __init__(self, make_inner, codec: TableCodec, noise_scope: str, chunk: int):
        self.make_inner = make_inner  # number of cells → configured count synthesizer
        self.codec = codec
        self.noise_scope = noise_scope
        self.chunk = int(chunk)
        probe = make_inner(2)
        self.m = probe.m
        self.private = probe.private

    @functools.cache  # noqa: B019 (a handful of table sizes per study object)
    def _inner(self, n_cells: int):
        return self.make_inner(n_cells), tuple(range(n_cells))

    def _release(self, data: RecordBatch, epsilon, ledger, rng):
        counts = group_sums(np.ones(data.cells.shape), data.cells, data.n_cells)
        keep = np.arange(data.n_cells)
        if self.noise_scope == "nonempty":
            keep = np.flatnonzero(counts.any(axis=0))
        inner, levels = self._inner(keep.size)
        values, cells, diagnostics = [], [], {}
        first_entries = None
        for start in range(0, data.n_replicates, self.chunk):
            part = CountBatch(counts[start:start + self.chunk, keep].astype(np.int64), data.n,
                              levels)
            chunk_ledger = PrivacyLedger()  # entries apply to every replicate: record them once
            sets, diag = inner._release(part, epsilon, chunk_ledger, rng)
            if first_entries is None:
                first_entries = chunk_ledger.entries
            r, m, k = sets.counts.shape
            flat = sets.counts.reshape(r * m, k)
            rows, cols = np.nonzero(flat)
            full = keep[np.repeat(cols, flat[rows, cols])].reshape(r, m, data.n)
            cells.append(full)
            values.append(self.codec.decode(full, rng))
            for key, v in diag.items():
                diagnostics.setdefault(key, []).append(v)
        for entry in first_entries:
            if self.noise_scope == "nonempty":
                entry = dataclasses.replace(entry, note=NOT_DP_NOTE)
            ledger.record(entry)
        diagnostics = {k: np.concatenate(v, axis=0) for k, v in diagnostics.items()}
        return RecordBatch(np.concatenate(values), np.concatenate(cells), data.n_cells,
                           data.columns), diagnostics


class FertilityCaseStudy(Study):
    grid_rules = {"split_seed": {"integer": True, "minimum": 0}}
    extra_keys = ("data_path", "split", "histogram_bounds", "svm", "tvd_reference",
                  "chunk_replicates")
    data_files = {"data_path": None}  # null: the shipped experiments/bowen_liu/data copy

    # --- configuration ---------------------------------------------------------------------------
    def validate(self) -> None:
        cfg = self.config
        if cfg.get("histogram_bounds", "unit") not in BOUNDS:
            raise allowed("study.histogram_bounds", cfg.get("histogram_bounds"), list(BOUNDS))
        if cfg.get("tvd_reference", "train") not in TVD_REFERENCES:
            raise allowed("study.tvd_reference", cfg.get("tvd_reference"), TVD_REFERENCES)
        sp = cfg.get("split", {})
        for key in ("n_test", "n_test_altered"):
            v = sp.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"study.split.{key}: must be an integer >= 0, got {v!r}")
        svm = cfg.get("svm", {})
        as_number("study.svm.cost", svm.get("cost"))
        if not (isinstance(svm.get("folds"), int) and svm["folds"] >= 2):
            raise ConfigError(f"study.svm.folds: must be an integer >= 2, got {svm.get('folds')!r}")
        c = cfg.get("chunk_replicates", 10)
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise ConfigError(f"study.chunk_replicates: must be an integer >= 1, got {c!r}")
        require_sklearn()
        _ = self.data  # read and checked now: a bad file is one line, nothing written

    @functools.cached_property
    def data(self) -> FertilityData:
        return load_fertility(self.config.get("data_path"))

    @functools.cache  # noqa: B019
    def split_of(self, split_seed: int):
        sp = self.config["split"]
        train, test = split(self.data, n_test=sp["n_test"], n_test_altered=sp["n_test_altered"],
                            seed=int(split_seed))
        return self.data.subset(train), self.data.subset(test)

    @functools.cache  # noqa: B019
    def codec(self, split_seed: int) -> TableCodec:
        train, _ = self.split_of(split_seed)
        return TableCodec(train, self.config.get("histogram_bounds", "unit"))

    def reference(self, split_seed: int) -> FertilityData:
        """Reference data of the TVDs: the training records (default) or the full file."""
        if self.config.get("tvd_reference", "train") == "full":
            return self.data
        return self.split_of(split_seed)[0]

    # --- the study proper ----------------------------------------------------------------------
    def generate(self, scenario, rng, n_replicates):
        """The fixed training records, repeated for every repetition (the case study re-runs
        the synthesis, not the data): values (R, 80, 10) and their full-table cells."""
        train, _ = self.split_of(scenario["split_seed"])
        codec = self.codec(scenario["split_seed"])
        values = np.concatenate([train.features, train.altered[:, None]], axis=1)
        values = np.repeat(values[None], n_replicates, axis=0)
        return RecordBatch(values, codec.cells(values), codec.n_cells,
                           (*FEATURES, "diagnosis"))

    def method(self, label, scenario):
        name, params = self.roster_entry(label)
        key = f"study.roster.{label}"
        if name not in TABLE_SYNTHESIZERS:
            return make_synthesizer(name, key=key, **params)
        scope = params.pop("noise_scope", "all")
        if scope not in NOISE_SCOPES:
            raise allowed(f"{key}.noise_scope", scope, NOISE_SCOPES)
        if name == "modips":
            alpha = as_number(f"{key}.alpha", params.pop("alpha", 0.5))
            sens = as_number(f"{key}.sensitivity", params.pop("sensitivity", 1.0))

            def make_inner(k):
                return make_synthesizer(name, key=key, model=DirichletMultinomial(
                    (alpha,) * k, sensitivity=sens), **params)
        else:
            def make_inner(k):
                return make_synthesizer(name, key=key, **params)
        return TableSynthesizer(make_inner, self.codec(scenario["split_seed"]), scope,
                                self.config.get("chunk_replicates", 10))

    # --- evaluation -----------------------------------------------------------------------------
    def evaluations(self):
        """One metric evaluation of records and model releases (Tables 4 and 5)."""
        return [MetricEvaluation("svm_and_tables", self.case_study_metrics,
                                 kinds=("records", "model"), names=METRICS)]

    def case_study_metrics(self, original, release, scenario):
        """Per replicate: the confusion matrix on the 20 test cases ("+" = altered), the
        consistency rate (TP + TN)/20 and the 5-fold CV accuracy of the SVM trained on the
        release (Table 4); means and SDs of age and hours and the TVDs (Table 5). A model
        release (PrivateSVM) is scored on the test cases only."""
        _, test = self.split_of(scenario["split_seed"])
        sets = release.sets
        if release.kind == "model":
            pred = sets.predict(test.features)
            return _confusion(pred, test.altered)
        from .analysis import svm_predictions

        svm = self.config["svm"]
        pred, cv = svm_predictions(sets.values, test.features, cost=as_number(
            "study.svm.cost", svm["cost"]), folds=svm["folds"], seed=svm.get("cv_seed", 0))
        out = _confusion(pred, test.altered)
        out["cv_accuracy"] = cv.mean(axis=1)
        out.update(summary_statistics(sets.values, self.reference(scenario["split_seed"])))
        return out


def _confusion(pred: np.ndarray, observed: np.ndarray) -> dict[str, np.ndarray]:
    """Confusion counts (averaged over the m sets) of predictions (R, m, n_test)."""
    pos = observed[None, None] == 1
    tp = ((pred == 1) & pos).sum(-1).mean(1)
    fn = ((pred == 0) & pos).sum(-1).mean(1)
    fp = ((pred == 1) & ~pos).sum(-1).mean(1)
    tn = ((pred == 0) & ~pos).sum(-1).mean(1)
    return {"tp": tp, "fn": fn, "fp": fp, "tn": tn,
            "consistency_rate": (tp + tn) / observed.size}


def table_counts(values: np.ndarray) -> np.ndarray:
    """Counts (..., 4, 2, 2, 2, 3, 5, 3, 2) of the 8 categorical variables of records
    ``values`` (..., n, 10)."""
    codes = [np.argmin(np.abs(values[..., c, None] - np.asarray(lv)), axis=-1)
             for c, lv in zip(CATEGORICAL_COLUMNS, LEVELS, strict=True)]
    cat = np.ravel_multi_index(codes, SHAPE)
    counts = group_sums(np.ones(cat.shape), cat, int(np.prod(SHAPE)))
    return counts.reshape(*counts.shape[:-1], *SHAPE)


def average_tvd(p: np.ndarray, q: np.ndarray, order: int) -> np.ndarray:
    """t⁻¹ Σ_j ‖p*_j − p_j‖₁ over all t tables of the given order (Table 5 footnote: no ½),
    for joint probabilities p (..., *SHAPE) and a reference q (*SHAPE)."""
    d = len(SHAPE)
    lead = p.ndim - d
    total, t = 0.0, 0
    for keep in itertools.combinations(range(d), order):
        drop = tuple(i for i in range(d) if i not in keep)
        a = p.sum(axis=tuple(lead + i for i in drop)) if drop else p
        b = q.sum(axis=drop) if drop else q
        total = total + np.abs(a - b).reshape(*p.shape[:lead], -1).sum(-1)
        t += 1
    return total / t


def summary_statistics(values: np.ndarray, reference: FertilityData) -> dict[str, np.ndarray]:
    """Table 5 per replicate (averaged over the m sets): mean and SD (ddof 1) of age and hours,
    TVD of the 1-, 2-, 3- and 8-way tables against the reference data."""
    age = values[..., FEATURES.index("age")]
    hours = values[..., FEATURES.index("hours")]
    ref_values = np.concatenate([reference.features, reference.altered[:, None]], axis=1)
    q = table_counts(ref_values) / reference.n
    p = table_counts(values) / values.shape[-2]
    out = {"age_mean": age.mean(-1).mean(1), "age_sd": age.std(-1, ddof=1).mean(1),
           "hours_mean": hours.mean(-1).mean(1), "hours_sd": hours.std(-1, ddof=1).mean(1)}
    for k in ORDERS:
        out[f"tvd_{k}"] = average_tvd(p, q, k).mean(1)
    return out


STUDY_CLASS = FertilityCaseStudy
