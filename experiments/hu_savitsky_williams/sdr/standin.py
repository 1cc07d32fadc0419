"""A stand-in for the 2017 SDR public-use sample of Hu, Savitsky & Williams §3 (spec 002 §7.1–
§7.2): the real file needs a download from NCSES, so the study draws, by default, one sample of
n = 10,355 from a pseudo-population calibrated to what the paper prints.

Assumptions (each a choice of ours or of the spec; the paper gives only Tables 2–3, n, N̂ and
corr(y, w) ≈ 0.09):

* **A1 cells**: the pseudo-population has N = 125,200 units whose field × gender cell sizes are
  the "Sample" interior counts of Table 2 (the estimated population sizes; they sum to 125,200,
  the printed total 125,199 differs by rounding).
* **A2 salary**: log y ~ N(log μ_fg − s_y²/2, s_y²) with μ_fg the "Sample" interior means of
  Table 3, so cell means match Table 3 in expectation; s_y = 0.55 (calibrated, A5).
* **A3 size measure**: log π_i = log(1.5)·1{female} + b·(log y_i − mean log y) + e_i with
  e_i = clip(N(0, s_e²), −c, c): women oversampled 1.5× (the SDR oversamples by gender; the
  factor is ours), a weak negative salary effect b (a nearly non-informative design: weights
  rise slightly with salary), and a clipped noise so that the weights vary a lot within a
  stratum (CV ≈ 1) but within a bounded range, as the paper's Laplace SEs imply (A5).
* **A4 design**: stratified by field, PPS with replacement (as the simulation, spec §7.3),
  allocation n_h ∝ N_h^0.7 by largest remainder (2338, 655, 699, 1523, 1204, 1363, 1981, 592;
  sums to 10,355), π*_i = min(1, n_h p_i), w_i = 1/π*_i (capped π* gives w ≥ 1).
* **A5 calibration**: (s_y, b, s_e, c) = (0.55, −0.15, 1.45, 1.2) were picked on a small grid
  so that, averaged over samples, corr(y, w) ≈ 0.09, the stratified-linearised SE of the
  All-fields count ≈ 1383 and of the All-fields mean salary ≈ 1050 (Tables 2–3), and the
  largest within-cell weight range (the Laplace count sensitivity, Eq. 8) ≈ 100: Table 2's
  Laplace SEs, ≈ 21·Δ at ε = 10.8 with 10 replicates (√2·16·10/10.8 ≈ 21), imply Δ ≈ 70
  (median of the 16 interior cells) to ≈ 120 (field totals). An unclipped lognormal noise with
  the same SEs gives weights up to ≈ 300 and a Laplace baseline 3–4 times noisier than the
  paper's. Not calibrated: cell-level SEs, the URM oversampling, top-coding of salaries, the
  weights' exact distribution.

The population and the sample are each drawn once, from their own seeds (``population_seed``,
``sample_seed``): the application is one confidential sample, as in the paper.
"""

from __future__ import annotations

import numpy as np

from harness.data import RecordBatch

from ..population import GENDERS, Population, allocation, pps_samples

#: Table 2 "Sample" interior counts (rows fields 1..8, columns Male, Female): the cell sizes
CELL_SIZES = np.array([
    [18545, 15640], [4495, 1059], [4351, 1734], [13714, 4825],
    [4312, 8926], [8328, 7483], [20822, 6156], [2044, 2766],
])
#: Table 3 "Sample" interior mean salaries
CELL_MEANS = np.array([
    [115172, 98641], [135522, 118061], [105941, 102610], [111671, 106513],
    [104400, 89748], [104427, 86103], [123570, 109867], [117473, 93411],
], dtype=float)
SAMPLE_SIZE = 10_355  # employed respondents aged 40–44 (§3)
SALARY_SD = 0.55  # s_y (A2, A5)
FEMALE_SIZE_FACTOR = 1.5  # A3
SALARY_SIZE_SLOPE = -0.15  # b (A3, A5)
SIZE_NOISE_SD = 1.45  # s_e (A3, A5)
SIZE_NOISE_CLIP = 1.2  # c (A3, A5)
ALLOCATION_POWER = 0.7  # A4
#: calibration targets (Tables 2–3 "All fields" SEs; §3 "about 0.09"; the Laplace count
#: sensitivity range implied by Table 2's Laplace SEs, A5)
TARGETS = {"corr_salary_weight": 0.09, "se_total_count": 1383.0, "se_total_mean": 1050.0,
           "count_sensitivity": (70.0, 120.0)}


def field_allocation(n: int = SAMPLE_SIZE) -> np.ndarray:
    """n_h ∝ N_h^0.7 by largest remainder (A4)."""
    return allocation(n, CELL_SIZES.sum(axis=1) ** ALLOCATION_POWER)


def make_sdr_population(rng: np.random.Generator) -> Population:
    """The N = 125,200 units of the pseudo-population (A1–A3), in cell order."""
    sizes = CELL_SIZES.ravel()
    cell = np.repeat(np.arange(sizes.size), sizes)
    female = cell % len(GENDERS)
    mu = np.log(CELL_MEANS.ravel()) - SALARY_SD**2 / 2.0
    log_y = mu[cell] + SALARY_SD * rng.standard_normal(cell.size)
    log_pi = (np.log(FEMALE_SIZE_FACTOR) * female + SALARY_SIZE_SLOPE * (log_y - log_y.mean())
              + np.clip(SIZE_NOISE_SD * rng.standard_normal(cell.size), -SIZE_NOISE_CLIP,
                        SIZE_NOISE_CLIP))
    return Population(cell // len(GENDERS), female, np.exp(log_y), np.exp(log_pi))


def draw_sdr_sample(pop: Population, rng: np.random.Generator,
                    n: int = SAMPLE_SIZE) -> RecordBatch:
    """One stratified PPS-with-replacement sample (A4): a RecordBatch (1, n, 3) with columns
    (field, gender, salary), weights 1/π* and strata = field."""
    return pps_samples(pop, field_allocation(n), rng, 1)


def standin_sample(population_seed: int, sample_seed: int) -> RecordBatch:
    """The study's confidential sample: the pseudo-population from ``population_seed``, one
    sample from ``sample_seed``."""
    pop = make_sdr_population(np.random.default_rng(int(population_seed)))
    return draw_sdr_sample(pop, np.random.default_rng(int(sample_seed)))
