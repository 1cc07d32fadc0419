"""The S4 exponential-decay probe (experiments/bi_shen/s4/decay_probe.py) at a small p (the
report's run is p = 250): the rate reaches the data, Table 1's cells sit beside ours, the result
is determined by the seed, and the computation is registered."""

import numpy as np
import pandas as pd
import pytest

from experiments.bi_shen.paper import PAPER
from experiments.bi_shen.s4 import decay_probe

SMALL = {**decay_probe.SETTINGS, "N": 60, "p": 12, "replicates": 2, "rates": (2.0, 0.5),
         "methods": ("NP", "DIP_25")}


@pytest.fixture(scope="module")
def small():
    return decay_probe.make_tables(SMALL, log=lambda *_: None)["decay_rate"]


def test_rows_per_rate_and_method_with_table_1_beside(small):
    print(small.to_string(index=False))
    assert list(zip(small["rate"], small["method"], strict=True)) == [
        (2.0, "NP"), (2.0, "DIP"), (0.5, "NP"), (0.5, "DIP")]
    dip = small[small["method"] == "DIP"]
    assert (dip["paper"] == 29.32).all()  # Table 1, exp_decay, 25 %, ε = 1
    assert np.allclose(dip["ours_over_paper"], dip["entropy_loss"] / 29.32, rtol=1e-4)
    assert small.loc[small["method"] == "NP", "paper"].isna().all()
    assert (small["entropy_loss"] > 0).all() and (small["replicates"] == 2).all()


def test_the_rate_changes_the_network_and_the_seed_fixes_the_result(small):
    np_ = small[small["method"] == "NP"].set_index("rate")["entropy_loss"]
    assert np_[2.0] != np_[0.5]  # each rate fits its own network's data
    again = decay_probe.make_tables(SMALL, log=lambda *_: None)["decay_rate"]
    pd.testing.assert_frame_equal(again, small, check_exact=True)


def test_registered_as_a_computation_of_the_paper():
    c = PAPER.computations[decay_probe.NAME]
    assert c.make is decay_probe.make_tables and c.settings == decay_probe.SETTINGS
    assert c.settings["rates"][0] == 2.0  # the appendix's rate comes first
