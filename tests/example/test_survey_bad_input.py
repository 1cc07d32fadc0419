"""Bad input of the study contract: one line naming the key and what is allowed, status 2, and
nothing written. Plus the schema, weights and ledger pieces it rests on."""

import numpy as np
import pandas as pd
import pytest
from study_helpers import assert_bad_run_input, cli_main

from harness.data import RecordBatch, check_weights
from harness.errors import ConfigError
from harness.privacy import PrivacyLedger, exponential_mechanism
from harness.schema import Schema

EX = ["study=example_survey", "profile=ci"]


def _frame_with(tmp_path, **changes) -> str:
    frame = pd.read_csv("experiments/example/data/frame.csv")
    for column, (row, value) in changes.items():
        frame[column] = frame[column].astype(object)
        frame.loc[row, column] = value
    path = tmp_path / "frame.csv"
    frame.to_csv(path, index=False)
    return str(path)


CASES = {
    "unknown privacy axis": (["study.privacy_axis=lipschitz"],
                             ["study.privacy_axis", "'lipschitz'", "allowed: epsilon_draw"]),
    "unsupported release kind": (["study.evaluations.tvd_to_original.methods=[Ori,PrivMode]"],
                                 ["study.evaluations.tvd_to_original", "'model'", "PrivMode",
                                  "supports: records"]),
    "evaluation of an unknown method": (
        ["study.evaluations.tvd_to_original.methods=[Ori,Nobody]"],
        ["study.evaluations.tvd_to_original.methods", "'Nobody'", "allowed: Ori, ExpSynth"]),
    "unknown evaluation": (["+study.evaluations.nothing_like_it={}"],
                           ["study.evaluations.nothing_like_it", "no evaluation"]),
    "pool_m beyond m": (["study.roster.ExpSynth.pool_m=[1,7]"],
                        ["study.roster.ExpSynth.pool_m", "7", "allowed: 1..5"]),
    "pool_m scalar": (["study.roster.ExpSynth.pool_m=3"],
                      ["study.roster.ExpSynth.pool_m", "list"]),
    "privacy grid missing": (["study.privacy_values=null"],
                             ["study.privacy_values", "epsilon_draw grid is missing"]),
    "privacy value zero": (["study.privacy_values=[0,0.1]"],
                           ["study.privacy_values", "(0, inf)", "got 0"]),
    "schema level repeated": (["study.schema.columns.1.levels=[low,low,high]"],
                              ["study.schema.columns.y.levels", "distinct"]),
    "structural zero outside the levels": (
        ["study.schema.structural_zeros=[{stratum: west, y: high}]"],
        ["study.schema.structural_zeros[0].stratum", "'west'", "allowed: north, south, east"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_contract_input_is_one_line_and_writes_nothing(case, tmp_path):
    overrides, words = CASES[case]
    assert_bad_run_input(tmp_path / "out", [*EX, *overrides], words)


@pytest.mark.parametrize("column,row,value,words", [
    ("y", 7, "very high", ["study.frame.y", "'very high'", "allowed: low, mid, high"]),
    ("stratum", 0, "west", ["study.frame.stratum", "'west'", "allowed: north, south, east"]),
    ("weight", 3, -2, ["study.frame.weight", "record 3", "-2.0", ">= 0"]),
    ("weight", 5, None, ["study.frame.weight", "record 5", "missing"]),
    ("age", 2, 130, ["study.frame.age", "130", "[18, 90]"]),
    ("y", 1, "high", ["study.frame", "structural zero", "'east'"]),  # row 1 is in the east
])
def test_bad_data_is_one_line_naming_the_column(column, row, value, words, tmp_path):
    path = _frame_with(tmp_path, **{column: (row, value)})
    out = tmp_path / "out"
    status, stdout, err = cli_main("run", *EX, f"study.frame={path}", f"out_dir={out}")
    assert status == 2, stdout + err
    lines = err.splitlines()
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    assert not out.exists()


def test_schema_reads_levels_bounds_and_structural_zeros():
    schema = Schema.from_config({"columns": [
        {"name": "a", "levels": ["x", "y"]}, {"name": "b", "levels": [1, 2, 3]},
        {"name": "v", "bounds": [0, 1]}], "structural_zeros": [{"a": "y", "b": 3}, {"b": 1}]})
    assert schema.cell_shape() == (2, 3)
    np.testing.assert_array_equal(schema.structural_zero_mask(),
                                  [[True, False, False], [True, False, True]])
    frame = pd.DataFrame({"a": ["x", "y"], "b": [2, 2], "v": [0.5, 1.0]})
    codes = schema.encode(frame)
    np.testing.assert_array_equal(codes, [[0, 1, 0.5], [1, 1, 1.0]])
    pd.testing.assert_frame_equal(schema.decode(codes), frame, check_dtype=False)
    # a mapping of columns is read in sorted name order (configs reach workers key-sorted)
    by_name = Schema.from_config({"columns": {"z": {"levels": [0, 1]}, "a": {"bounds": [0, 1]}}})
    assert by_name.names == ("a", "z")
    with pytest.raises(ConfigError, match=r"schema.columns.v.bounds: give \[lower, upper\]"):
        Schema.from_config({"columns": [{"name": "v", "bounds": [1, 0]}]})
    with pytest.raises(ConfigError, match="exactly one of levels"):
        Schema.from_config({"columns": [{"name": "v"}]})


def test_weights_must_be_finite_and_non_negative():
    values = np.zeros((2, 3, 1))
    assert RecordBatch(values, weights=np.ones((2, 3))).weights.shape == (2, 3)
    with pytest.raises(ConfigError, match=r"weights: weight of record 1 is -1.0 \(weights"):
        RecordBatch(values, weights=np.array([[1, -1, 1], [1, 1, 1.0]]))
    with pytest.raises(ConfigError, match="is missing"):
        check_weights("w", [1.0, np.nan])
    with pytest.raises(ConfigError, match=r"weights of shape \(3,\), records need \(2, 3\)"):
        RecordBatch(values, weights=np.ones(3))
    # weights and strata follow the records through set axes
    batch = RecordBatch(values, weights=np.ones((2, 3)), strata=np.zeros((2, 3), int))
    two = RecordBatch.stack_sets([batch, batch])
    assert two.weights.shape == (2, 2, 3) and two.first_sets(1).strata.shape == (2, 1, 3)


def test_ledger_first_sets_and_repeated_exponential_draws():
    ledger = PrivacyLedger(relation="substitution")
    rng = np.random.default_rng(0)
    for j in range(3):
        exponential_mechanism(np.zeros((4, 10, 3)), sensitivity=1.0, epsilon=0.1, rng=rng,
                              ledger=ledger.for_set(j), statistic="s", draws_axis=1,
                              parallel_group=f"set {j}")
    assert ledger.total_epsilon() == pytest.approx(3.0)  # 3 sets × 10 draws × 0.1
    assert ledger.first_sets(2).total_epsilon() == pytest.approx(2.0)
    assert {e.set_index for e in ledger.entries} == {0, 1, 2}
    assert ledger.relations() == ("substitution",)
    with pytest.raises(ValueError, match="relation"):
        PrivacyLedger(relation="neighbourly")
