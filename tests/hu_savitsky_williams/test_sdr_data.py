"""The SDR application's data (spec 002 §7.1–§7.2): the calibrated stand-in reproduces the
printed margins and design targets within sampling error, and a user's CSV of the PUF subset is
read exactly or rejected with one line naming the column, nothing written."""

import numpy as np
import pandas as pd
import pytest
from study_helpers import assert_bad_run_input

from experiments.hu_savitsky_williams.paper_numbers import TABLE_2, TABLE_3
from experiments.hu_savitsky_williams.sdr.puf import load_sdr_csv
from experiments.hu_savitsky_williams.sdr.standin import (
    CELL_MEANS,
    CELL_SIZES,
    SAMPLE_SIZE,
    TARGETS,
    draw_sdr_sample,
    field_allocation,
    make_sdr_population,
    standin_sample,
)
from harness.errors import ConfigError
from harness.inference.survey import survey_table, two_way_domains

DOMAINS = two_way_domains(range(1, 9), ("Male", "Female"))
INTERIOR = [i for i, lv in enumerate(DOMAINS.levels) if lv == "interior"]


def _table(batch, r=0):
    v = batch.values[r]
    cells = (v[:, 0] * 2 + v[:, 1]).astype(np.int64)
    return survey_table(cells, batch.weights[r], v[:, 2], DOMAINS, batch.strata[r], 8)


@pytest.fixture(scope="module")
def population():
    return make_sdr_population(np.random.default_rng(0))


def test_population_cells_and_allocation_are_the_printed_ones(population):
    assert CELL_SIZES.sum() == 125_200  # Table 2's interior counts (printed total 125,199)
    assert np.array_equal(CELL_SIZES.ravel(), [TABLE_2[f"F{f}_{g}"][0][0] for f in range(1, 9)
                                               for g in ("Male", "Female")])
    assert np.array_equal(np.bincount(population.cell, minlength=16), CELL_SIZES.ravel())
    assert field_allocation().tolist() == [2338, 655, 699, 1523, 1204, 1363, 1981, 592]
    assert field_allocation().sum() == SAMPLE_SIZE


def test_standin_margins_and_design_match_the_targets(population):
    """Over 6 samples: every interior weighted count and mean lies within 4 linearised SEs of
    Tables 2–3's sample values (the population's cell sizes and expected means), and the design
    summaries the stand-in is calibrated to are near their targets."""
    rng = np.random.default_rng(11)
    z_count, z_mean, corr, se_count, se_mean, sens = [], [], [], [], [], []
    for _ in range(6):
        batch = draw_sdr_sample(population, rng)
        t = _table(batch)
        z_count.append((t.counts[INTERIOR] - CELL_SIZES.ravel()) / np.sqrt(
            t.count_variance[INTERIOR]))
        z_mean.append((t.means[INTERIOR] - CELL_MEANS.ravel()) / np.sqrt(
            t.mean_variance[INTERIOR]))
        y, w = batch.values[0, :, 2], batch.weights[0]
        corr.append(np.corrcoef(y, w)[0, 1])
        se_count.append(np.sqrt(t.count_variance[0]))
        se_mean.append(np.sqrt(t.mean_variance[0]))
        cells = (batch.values[0, :, 0] * 2 + batch.values[0, :, 1]).astype(int)
        sens.append(max(np.ptp(w[cells == c]) for c in range(16)))
    got = {"corr": np.mean(corr), "se_count": np.mean(se_count), "se_mean": np.mean(se_mean),
           "sensitivity": np.mean(sens)}
    print("stand-in:", got, "targets:", TARGETS, "max |z| counts / means:",
          np.abs(z_count).max(), np.abs(z_mean).max())
    assert np.abs(z_count).max() < 4 and np.abs(z_mean).max() < 4
    assert got["corr"] == pytest.approx(TARGETS["corr_salary_weight"], abs=0.03)
    assert got["se_count"] == pytest.approx(TARGETS["se_total_count"], rel=0.1)
    assert got["se_mean"] == pytest.approx(TARGETS["se_total_mean"], rel=0.1)
    lo, hi = TARGETS["count_sensitivity"]
    assert lo <= got["sensitivity"] <= hi
    # the weights estimate N (Hansen–Hurwitz) and the mean salary is Table 3's within 3 SE
    assert batch.weights.sum() == pytest.approx(TABLE_2["all_total"][0][0], rel=0.03)
    assert abs(t.means[0] - TABLE_3["all_total"][0][0]) < 3 * np.sqrt(t.mean_variance[0])


# --- the user's CSV ---------------------------------------------------------------------------

GENDER = {0: "Male", 1: "Female"}


def _frame(batch) -> pd.DataFrame:
    v = batch.values[0]
    return pd.DataFrame({"field": v[:, 0].astype(int) + 1,
                         "gender": [GENDER[int(g)] for g in v[:, 1]],
                         "salary": v[:, 2], "weight": batch.weights[0]})


@pytest.fixture(scope="module")
def small():
    """80 records of the stand-in sample, 10 per field, as a data frame."""
    frame = _frame(standin_sample(0, 0))
    return frame.groupby("field").head(10).reset_index(drop=True)


def test_a_csv_of_the_standin_reads_back_exactly(tmp_path):
    batch = standin_sample(0, 0)
    path = tmp_path / "sdr.csv"
    _frame(batch).rename(columns={"salary": "SALARY", "weight": "WTSURVY"}).to_csv(
        path, index=False, float_format="%.17g")
    got = load_sdr_csv(path, {"salary": "SALARY", "weight": "WTSURVY"}, expected_n=10_355,
                       expected_weight_total=float(batch.weights.sum()))
    assert np.array_equal(got.values, batch.values)
    assert np.array_equal(got.weights, batch.weights)
    assert np.array_equal(got.strata, batch.strata)


def _set(frame, column, row, value):
    out = frame.astype({column: object}).copy()
    out.loc[row, column] = value
    return out


BAD = {
    "missing weight column": (lambda f: f.drop(columns="weight"), {},
                              ["study.csv_path", "no column 'weight'", "required columns"]),
    "non-numeric weight": (lambda f: _set(f, "weight", 3, "abc"), {},
                           ["column weight", "line 5", "'abc', not a number", ">= 1"]),
    "missing weight": (lambda f: _set(f, "weight", 7, ""), {},
                       ["column weight", "line 9", "missing"]),
    "zero weight": (lambda f: _set(f, "weight", 0, 0.0), {}, ["column weight", "line 2", ">= 1"]),
    "negative weight": (lambda f: _set(f, "weight", 1, -4.0), {}, ["column weight", "-4"]),
    "weight below 1 (π > 1)": (lambda f: _set(f, "weight", 2, 0.5), {},
                               ["column weight", "0.5", "π <= 1"]),
    "weights not summing to the design total": (lambda f: f, {"expected_weight_total": 125199},
                                                ["column weight", "sum to", "125199"]),
    "row count not the SDR subset's": (lambda f: f, {"expected_n": 10355},
                                       ["study.expected_n", "80 rows", "10355"]),
    "one respondent in a field": (lambda f: f.drop(index=f.index[f["field"] == 3][1:]), {},
                                  ["column field", "field 3 has 1", "at least 2"]),
    "unknown field": (lambda f: _set(f, "field", 4, 9), {}, ["column field", "'9'", "1..8"]),
    "unknown gender": (lambda f: _set(f, "gender", 4, "X"), {},
                       ["column gender", "'X'", "Male, Female"]),
    "non-positive salary": (lambda f: _set(f, "salary", 4, 0), {}, ["column salary", "> 0"]),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_csv_is_one_line_naming_the_column(small, tmp_path, case):
    change, kwargs, words = BAD[case]
    path = tmp_path / "bad.csv"
    change(small).to_csv(path, index=False)
    with pytest.raises(ConfigError) as err:
        load_sdr_csv(path, **kwargs)
    msg = str(err.value)
    print(msg)
    assert "\n" not in msg
    for word in words:
        assert word in msg, (word, msg)


def test_bad_csv_on_the_command_line_writes_nothing(small, tmp_path):
    path = tmp_path / "bad.csv"
    _set(small, "weight", 3, "abc").to_csv(path, index=False)
    assert_bad_run_input(tmp_path / "out", ["study=hu_savitsky_williams_sdr", "profile=ci",
                                            "study.grid.data=[csv]", f"study.csv_path={path}"],
                         ["column weight", "line 5", "not a number"])
