"""The m, B and n ablations of spec 001 §6 as variant sweeps (experiments/park_ghosh/maps/
ablation.py), and Table 3's paper constants: configs and tables, no sweep."""

import pandas as pd

from experiments.park_ghosh.data import ORDER
from experiments.park_ghosh.maps.ablation import MB, N_VALUES, N, ablation_table
from experiments.park_ghosh.maps.tables import paper_trace
from experiments.park_ghosh.paper import PAPER
from harness.report import study_config


def test_mb_variant_sweeps_every_m_and_b_setting():
    cfg = study_config(PAPER, MB, [])
    roster = cfg["study"]["roster"]
    pegs = {(roster[m]["head_size"], roster[m].get("B")) for m in cfg["methods"]
            if roster[m]["synthesizer"] == "pegs"}
    rs = {(roster[m]["head_size"], roster[m]["B"]) for m in cfg["methods"]
          if roster[m]["synthesizer"] == "pegs_rs"}
    assert pegs == {(1, None), (2, None), (3, None)}
    assert rs == {(1, 10), (2, 10), (3, 10), (2, 1), (2, 5), (2, 20), (2, 50)}
    assert "PMI" not in cfg["methods"] and "Boot" in cfg["methods"]
    # the base labels keep the base roster's entries: m = 2, B = 10
    assert roster["PeGS"]["head_size"] == 2 and roster["PeGS.rs"]["B"] == 10


def test_n_variant_sweeps_the_three_sizes_with_the_two_samplers():
    cfg = study_config(PAPER, N, [])
    assert tuple(cfg["study"]["grid"]["n"]) == N_VALUES
    assert cfg["methods"] == ["PeGS", "PeGS.rs"]


def test_ablation_table_labels_each_setting():
    mx = pd.DataFrame({"n": 200000, "method": ["PeGS_m3", "PeGS.rs_B50", "Boot"],
                       "privacy": [1.0, 1.0, float("nan")], "metric": "marginal_sum",
                       "value": [0.1, 0.2, 0.3], "mcse": [0.01, 0.02, 0.03]})
    t = ablation_table(mx).set_index("method")
    assert (t.loc["PeGS_m3", "m"], t.loc["PeGS.rs_B50", "B"]) == (3, 50)
    assert t.loc["Boot", "epsilon_sample"] == "reference"
    assert t.loc["PeGS.rs_B50", "marginal_sum"] == "0.2 ± 0.02"


def test_papers_table3_changes_nine_features_and_keeps_sex_race_pay_cat():
    t = paper_trace()
    assert len(t) == len(ORDER) + 1
    changed = [ORDER[i - 1] for i in range(1, len(t)) if t["paper_changed"].iloc[i] == "yes"]
    assert len(changed) == 9  # §4.2: "the final transformed sample is different from the seed"
    assert not {"sex", "race", "pay", "cat"} & set(changed)  # Table 3's caption
