"""The evidence behind two findings of the report (issue 25): the SDR stand-in's cell table
(``sdr/standin_cells.py``) and the FBS count-interval decomposition of the repeated-sampling
study (``mc/tables.py`` ``fbs_count_variance``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from experiments.hu_savitsky_williams.mc.tables import CELLS, fbs_count_variance
from experiments.hu_savitsky_williams.paper import PAPER, SDR
from experiments.hu_savitsky_williams.paper_numbers import TABLE_4
from experiments.hu_savitsky_williams.sdr import standin_cells


def test_standin_field5_men_hold_one_tail_unit_drawn_twice():
    settings = dict(standin_cells.SETTINGS, samples=8)
    t = standin_cells.make_tables(settings)["standin_cells"].set_index("cell")
    f5 = t.loc["F5_Male"]
    # the study's reference estimate (Table 3 "Sample", replicate 0 of the committed report)
    assert round(f5["sample_mean"]) == 129436 and round(f5["paper_mean"]) == 104400
    assert f5["top_copies"] == 2 and f5["top_share"] > 0.25 and f5["top_log_z"] > 3.5
    assert abs(f5["mean_without_top"] / f5["pop_mean"] - 1) < 0.05
    # the pseudo-population is on target in every cell; no other cell has a pair of copies
    assert np.allclose(t["pop_mean"], t["paper_mean"], rtol=0.05)
    assert (t.drop(index="F5_Male")["top_copies"] == 1).all()
    assert (t["samples"] == 8).all()
    computation = PAPER.computations[standin_cells.NAME]
    assert computation.study == SDR


def _rows(method, m, privacy, estimates, variance, truth=100.0):
    """Interval rows of the 24 count cells, one per (cell, replicate)."""
    out = []
    for cell in CELLS:
        for r, est in enumerate(estimates):
            half = 1.96 * np.sqrt(variance)
            out.append({"method": method, "m": m, "privacy": privacy,
                        "estimand": f"count_{cell}", "replicate": r, "estimate": est,
                        "truth": truth, "variance": variance, "within": variance / 2,
                        "between": 1.5 * variance, "ci_low": est - half,
                        "ci_high": est + half})
    return out


def test_fbs_count_variance_decomposes_coverage():
    fbs = [100.0, 103.0, 97.0, 110.0]  # errors 0, 3, -3, 10: the last one not covered
    ori = [100.0, 101.0, 99.0, 108.0]
    rows = pd.DataFrame(_rows("FBS", 3, 1.8, fbs, 4.0) + _rows("FBS", 5, 1.8, ori, 1.0)
                        + _rows("ori", 1, np.nan, ori, 9.0))
    t = fbs_count_variance(rows).set_index("cell")
    assert list(t.index) == [*CELLS, "mean"]
    row = t.loc["F1_Male"]
    sd = np.std(fbs, ddof=1)
    assert row["cov"] == pytest.approx(0.75) and row["cov_paper"] == TABLE_4["F1_Male"][0]
    assert row["cov_mcse"] == pytest.approx(np.sqrt(0.75 * 0.25 / 4), abs=1e-4)
    assert row["bias_over_sd"] == pytest.approx(np.mean(fbs) / sd - 100 / sd, abs=1e-4)
    assert row["se_over_sd"] == pytest.approx(2.0 / sd, abs=1e-4)
    assert row["se_within"] == pytest.approx(np.sqrt(2.0), abs=1e-4)
    assert row["se_between"] == pytest.approx(np.sqrt(2.0), abs=1e-4)  # b/m = 1.5·4/3
    assert row["ori_se"] == pytest.approx(3.0) and row["ori_sd"] == pytest.approx(
        np.std(ori, ddof=1), abs=1e-4)
    # the intervals hold the confidential estimate in replicates 0-2 (|103-101| < 3.92), and
    # in replicate 3 (|110-108| < 3.92)
    assert row["cov_of_sample"] == pytest.approx(1.0)
    assert t.loc["mean", "cov_mcse"] == pytest.approx(row["cov_mcse"] / np.sqrt(24), abs=1e-4)
