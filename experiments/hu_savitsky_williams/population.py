"""The simulation population and sampling design of Hu, Savitsky & Williams §4.1 (spec 002 §7.3),
rebuilt from the population columns of the paper's Tables 4–5.

* N = 100,000 units with the exact field × gender cell sizes of Tables 4–5 (8 fields, 2 genders).
* Salary y ~ Lognormal(μ_fg, 0.4²) with μ_fg = log(cell mean of Tables 4–5) − 0.4²/2, so the
  realised cell means match the tables in expectation (spec A16: the paper's μ_fg are not
  printed).
* Size measure (Eq. 11): log π_i = log y_i + N(0, 0.4²): larger salaries, larger inclusion
  probabilities (an informative design).
* Sample: stratified by field, n = 1000 with the proportional largest-remainder allocation
  (280, 27, 40, 181, 112, 129, 181, 50; spec A15), drawn with replacement within each stratum
  with probabilities p_i = π_i / Σ_{j∈h} π_j; inclusion probability π*_i = min(1, n_h p_i) and
  weight w_i = 1/π*_i (Hansen–Hurwitz); duplicate draws stay separate records.

Everything is deterministic given the numpy generator passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.data import RecordBatch
from harness.schema import Schema

FIELDS = tuple(range(1, 9))
GENDERS = ("Male", "Female")
#: population cell sizes N_fg (Tables 4–5, "Pop." columns): rows fields 1..8, columns M, F
CELL_SIZES = np.array([
    [14599, 13364], [1951, 783], [2918, 1117], [12381, 5728],
    [3861, 7336], [6433, 6409], [14358, 3773], [2033, 2956],
])
#: population cell mean salaries (Table 5, "Pop." column)
CELL_MEANS = np.array([
    [121125, 99226], [146916, 125358], [118338, 105081], [122601, 100618],
    [120531, 98060], [122676, 97595], [136370, 116566], [137349, 106388],
], dtype=float)
SALARY_SD = 0.4  # scale of log salary within a cell
SIZE_NOISE_SD = 0.4  # Eq. 11: log π = log y + N(0, 0.4²)
SAMPLE_SIZE = 1000
#: the released data's schema: field and gender are public design variables, salary the outcome
SCHEMA = Schema.from_config({"columns": [
    {"name": "field", "levels": list(FIELDS)},
    {"name": "gender", "levels": list(GENDERS)},
    {"name": "salary", "bounds": [0.0, 1e8]},
]})


@dataclass(frozen=True)
class Population:
    """The finite population: codes field (0..7), gender (0 = male, 1 = female), salary and
    size measure π (each (N,))."""

    field: np.ndarray
    gender: np.ndarray
    salary: np.ndarray
    size: np.ndarray

    @property
    def cell(self) -> np.ndarray:
        return self.field * len(GENDERS) + self.gender

    def cell_means(self) -> np.ndarray:
        """Realised mean salary of every field × gender cell (8, 2)."""
        k = CELL_SIZES.size
        s = np.bincount(self.cell, weights=self.salary, minlength=k)
        return (s / np.bincount(self.cell, minlength=k)).reshape(CELL_SIZES.shape)


def make_population(rng: np.random.Generator) -> Population:
    """The N = 100,000 units, in cell order (field-major, then gender)."""
    sizes = CELL_SIZES.ravel()
    cell = np.repeat(np.arange(sizes.size), sizes)
    mu = np.log(CELL_MEANS.ravel()) - SALARY_SD**2 / 2.0
    log_y = mu[cell] + SALARY_SD * rng.standard_normal(cell.size)
    log_pi = log_y + SIZE_NOISE_SD * rng.standard_normal(cell.size)
    return Population(cell // len(GENDERS), cell % len(GENDERS), np.exp(log_y), np.exp(log_pi))


def allocation(n: int, stratum_sizes) -> np.ndarray:
    """Proportional allocation of n records to strata by the largest-remainder rule."""
    sizes = np.asarray(stratum_sizes, dtype=float)
    quota = n * sizes / sizes.sum()
    out = np.floor(quota).astype(np.int64)
    order = np.argsort(-(quota - out), kind="stable")
    out[order[: n - out.sum()]] += 1
    return out


def inclusion_probabilities(pop: Population, n: int = SAMPLE_SIZE) -> np.ndarray:
    """π*_i = min(1, n_h π_i / Σ_{j∈h} π_j) of every population unit (N,)."""
    return pps_inclusion(pop, allocation(n, CELL_SIZES.sum(axis=1)))


def pps_inclusion(pop: Population, n_h: np.ndarray) -> np.ndarray:
    """π*_i = min(1, n_h p_i), p_i = π_i / Σ_{j∈h} π_j, of every unit for the allocation n_h."""
    totals = np.bincount(pop.field, weights=pop.size, minlength=len(n_h))
    return np.minimum(1.0, n_h[pop.field] * pop.size / totals[pop.field])


def draw_samples(pop: Population, rng: np.random.Generator, replicates: int = 1,
                 n: int = SAMPLE_SIZE) -> RecordBatch:
    """``replicates`` stratified PPS-with-replacement samples as a RecordBatch (R, n, 3) with
    columns (field, gender, salary), weights 1/π* and strata = field, records in field order."""
    return pps_samples(pop, allocation(n, CELL_SIZES.sum(axis=1)), rng, replicates)


def pps_samples(pop: Population, n_h: np.ndarray, rng: np.random.Generator,
                replicates: int = 1) -> RecordBatch:
    """Stratified (by field) PPS samples with replacement of n_h records per field: probabilities
    p_i = π_i / Σ_{j∈h} π_j, weights 1/π* (``pps_inclusion``, Hansen–Hurwitz), duplicate draws
    kept as separate records; a RecordBatch (R, Σ n_h, 3) in field order."""
    pi_star = pps_inclusion(pop, n_h)
    units = []
    for h in range(len(n_h)):
        members = np.flatnonzero(pop.field == h)
        p = pop.size[members] / pop.size[members].sum()
        units.append(members[rng.choice(members.size, size=(replicates, n_h[h]), p=p)])
    idx = np.concatenate(units, axis=1)
    values = np.stack([pop.field[idx], pop.gender[idx], pop.salary[idx]], axis=-1).astype(float)
    return RecordBatch(values, None, 1, SCHEMA.names, 1.0 / pi_star[idx],
                       pop.field[idx].astype(np.int64), SCHEMA)
