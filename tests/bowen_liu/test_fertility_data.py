"""The UCI Fertility loader and the 80/20 split of the Bowen & Liu case study (spec 000 §4.5)."""

import numpy as np
import pytest

from experiments.bowen_liu.fertility.data import (
    COLUMNS,
    default_path,
    load_fertility,
    split,
)
from harness.errors import ConfigError

GOOD = default_path().read_text().splitlines()


def test_shipped_file_has_the_spec_counts():
    d = load_fertility()
    assert d.n == 100 and d.features.shape == (100, 9)
    assert int(d.altered.sum()) == 12  # 88 N : 12 O
    codes = d.codes()
    # spec §4.5 REVIEW: counts per code
    assert np.bincount(codes[:, 0]).tolist() == [28, 37, 4, 31]  # season
    assert np.bincount(codes[:, 1]).tolist() == [13, 87]  # childish diseases
    assert np.bincount(codes[:, 2]).tolist() == [56, 44]  # accident
    assert np.bincount(codes[:, 3]).tolist() == [49, 51]  # surgical
    assert np.bincount(codes[:, 4]).tolist() == [9, 63, 28]  # fevers
    assert np.bincount(codes[:, 5]).tolist() == [1, 1, 19, 39, 40]  # alcohol
    assert np.bincount(codes[:, 6]).tolist() == [56, 23, 21]  # smoking
    age, hours = d.features[:, 1], d.features[:, 8]
    assert round(age.mean(), 3) == 0.669 and round(age.std(ddof=1), 3) == 0.121
    assert round(hours.mean(), 3) == 0.407 and round(hours.std(ddof=1), 3) == 0.186


def test_shipped_copy_is_packaged_with_attribution():
    assert default_path().exists()
    text = (default_path().parent / "ATTRIBUTION.md").read_text()
    assert "Gil" in text and "2012" in text and "CC BY 4.0" in text and "UCI" in text
    pyproject = (default_path().parents[3] / "pyproject.toml").read_text()
    assert "data/*.txt" in pyproject


def _write(tmp_path, lines):
    p = tmp_path / "fertility.txt"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_good_tmp_file_loads(tmp_path):
    d = load_fertility(_write(tmp_path, GOOD[:5]))
    assert d.n == 5
    assert d.altered.tolist() == [0, 1, 0, 0, 1]
    assert np.allclose(d.features[0], [-0.33, 0.69, 0, 1, 1, 0, 0.8, 0, 0.88])


@pytest.mark.parametrize(
    "line, match",
    [
        ("-0.33,0.69,0,1,1,0,0.8,0,0.88", r"line 3: 9 columns, expected 10"),
        ("season,age,a,b,c,d,e,f,g,diagnosis", r"line 3, column 1 \(season\): 'season' is not "
         r"allowed \(allowed: -1, -0.33, 0.33, 1\)"),
        ("0.5,0.69,0,1,1,0,0.8,0,0.88,N", r"line 3, column 1 \(season\): '0.5' is not allowed"),
        ("-0.33,0.2,0,1,1,0,0.8,0,0.88,N", r"line 3, column 2 \(age\): '0.2' is not allowed "
         r"\(allowed: a number in \[0.5, 1\]\)"),
        ("-0.33,0.69,2,1,1,0,0.8,0,0.88,N", r"column 3 \(childish_diseases\).*allowed: 0, 1"),
        ("-0.33,0.69,0,1,1,0.5,0.8,0,0.88,N", r"column 6 \(fevers\).*allowed: -1, 0, 1"),
        ("-0.33,0.69,0,1,1,0,0.3,0,0.88,N", r"column 7 \(alcohol\).*0.2, 0.4, 0.6, 0.8, 1"),
        ("-0.33,0.69,0,1,1,0,0.8,0,1.5,N", r"column 9 \(hours\).*\[0.06, 1\]"),
        ("-0.33,0.69,0,1,1,0,0.8,0,0.88,X", r"column 10 \(diagnosis\): 'X' is not allowed "
         r"\(allowed: N, O\)"),
    ],
)
def test_malformed_file_fails_with_one_line_naming_line_and_column(tmp_path, line, match):
    p = _write(tmp_path, [GOOD[0], GOOD[1], line, GOOD[3]])
    with pytest.raises(ConfigError, match=match) as info:
        load_fertility(p)
    assert "\n" not in str(info.value)
    assert str(p) in str(info.value)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(ConfigError, match="study.data_path: cannot read .*nope.txt .no such file"):
        load_fertility(tmp_path / "nope.txt")
    with pytest.raises(ConfigError, match="is empty"):
        load_fertility(_write(tmp_path, [""]))
    assert len(COLUMNS) == 10


def test_split_is_stratified_seeded_and_disjoint():
    d = load_fertility()
    train, test = split(d, n_test=20, n_test_altered=3, seed=2020)
    assert train.size == 80 and test.size == 20
    assert np.intersect1d(train, test).size == 0
    assert int(d.altered[test].sum()) == 3 and int(d.altered[train].sum()) == 9
    again = split(d, n_test=20, n_test_altered=3, seed=2020)
    assert np.array_equal(again[1], test)
    other = split(d, n_test=20, n_test_altered=3, seed=2021)
    assert not np.array_equal(other[1], test)
    assert int(d.altered[other[1]].sum()) == 3
    with pytest.raises(ConfigError, match="cannot put 13 altered"):
        split(d, n_test=20, n_test_altered=13, seed=1)
