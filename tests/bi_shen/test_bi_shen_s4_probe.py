"""The S4 probe (experiments/bi_shen/s4/probe.py), the computation behind the report's account
of why the record-level CV fails on a DIP release, at a small p (30; the report's run is p =
250): the mechanism, its clusters, its determinism under the seed, and its registration."""

import numpy as np
import pandas as pd
import pytest

from experiments.bi_shen.paper import PAPER
from experiments.bi_shen.s4 import probe
from harness import config

SMALL = {**probe.SETTINGS, "p": 30, "methods": ("NP", "DIP_15")}


@pytest.fixture(scope="module")
def small():
    return probe.make_tables(SMALL, log=lambda *_: None)


def test_grouped_cv_picks_above_the_grid_minimum_and_record_level_cv_the_smallest(small):
    choice = small["choice"].set_index(["method", "reading"])
    print(small["choice"].to_string(index=False))
    print(small["clusters"].to_string(index=False))
    lowest = float(small["penalty_path"]["penalty"].min())
    dip = choice.loc["DIP_15"]
    # the mechanism: record-level folds split a resample's near copies, so the CV picks the
    # grid's smallest penalty; with the copies in one fold it picks a larger one, whose loss
    # is far below the record-level pick's
    assert dip.loc["records", "penalty"] == lowest
    assert dip.loc["near_duplicates", "penalty"] > lowest
    assert dip.loc["near_duplicates", "entropy_loss"] < 0.5 * dip.loc["records", "entropy_loss"]
    assert dip.loc["grid_best", "entropy_loss"] == small["penalty_path"].query(
        "method == 'DIP_15'")["entropy_loss"].min()
    # NP's records have no near copies: singleton groups, the same folds and choice
    np_ = choice.loc["NP"]
    assert np_.loc["records", "penalty"] == np_.loc["near_duplicates", "penalty"]
    clusters = small["clusters"].set_index("method")
    assert clusters.loc["NP", "clusters"] == clusters.loc["NP", "rows"] == 200
    # the DIP release (170 rows from m = 30 hold-out rows) falls into 30 clusters, each
    # tighter than the gap between clusters
    assert clusters.loc["DIP_15", "rows"] == 170
    assert clusters.loc["DIP_15", "clusters"] == clusters.loc["DIP_15", "source_rows"] == 30
    assert clusters.loc["DIP_15", "largest_within"] < clusters.loc["DIP_15", "cut"] \
        < clusters.loc["DIP_15", "smallest_between"]
    assert (small["timing"]["cpu_seconds"] > 0).all() and len(small["timing"]) == 2


def test_deterministic_under_its_seed(small):
    again = probe.make_tables({**SMALL, "timing": False}, log=lambda *_: None)
    assert set(again) == set(small) - {"timing"}
    for name, table in again.items():
        pd.testing.assert_frame_equal(table, small[name], check_exact=True)
    other = probe.make_tables({**SMALL, "seed": 1, "methods": ("DIP_15",), "timing": False},
                              log=lambda *_: None)
    assert not np.array_equal(other["penalty_path"]["entropy_loss"],
                              small["penalty_path"].query("method == 'DIP_15'")["entropy_loss"])


def test_registered_as_a_computation_of_the_paper():
    comp = PAPER.computations[probe.NAME]
    assert comp.make is probe.make_tables and comp.settings is probe.SETTINGS
    assert probe.SETTINGS["p"] == 250 and probe.SETTINGS["epsilon"] == 1
    # the grouped CV's cut is the study's
    study = config.load(["study=bi_shen_s4", "profile=paper"])["study"]
    assert probe.SETTINGS["duplicate_share"] == study["glasso"]["duplicate_share"]
