"""``harness benchmark ... --merge=NAME`` (harness/benchmark/merge.py) and a study's declared
parameters of a benchmarked method (``benchmark.methods.<name>``).

The merge must give the leaderboard a full run gives: merging a study's committed rows of a
method back into the committed benchmark leaves every file byte for byte; a new method's rows
are ranked against the committed ones of that study only; interval studies (rows averaged
over estimands) are refused, and so is a study whose committed ranks do not come back."""

import shutil

import pandas as pd
import pytest

from harness.benchmark.command import FILES, plan
from harness.benchmark.merge import merge
from harness.errors import ConfigError
from harness.report import ROOT

NAME = "mst-aim-ci-r20"
STUDY = "park_ghosh_maps"
HEADLINE = {STUDY: {"marginal_sum": "lower", "cond_age_sum": "lower", "reg_linear": "lower",
                    "charge_match": "lower"}}


def _setup(tmp_path, rows: pd.DataFrame, study: str = STUDY):
    """A copy of the committed benchmark under tmp_path/root, and a run's output dir holding
    ``rows`` (full leaderboard rows) with the committed timings and interface of ``study``."""
    src = ROOT / "results" / "reference" / "benchmark" / NAME
    root = tmp_path / "root"
    shutil.copytree(src, root / "results" / "reference" / "benchmark" / NAME)
    out = tmp_path / "out"
    out.mkdir()
    rows.to_csv(out / "leaderboard.csv", index=False)
    for f in ("timings.csv", "interface.csv"):
        part = pd.read_csv(src / f)
        part[part.study == study].to_csv(out / f, index=False)
    return src, root, out


def _committed(f="leaderboard.csv"):
    return pd.read_csv(ROOT / "results" / "reference" / "benchmark" / NAME / f)


def test_merging_a_study_s_committed_rows_back_changes_no_byte(tmp_path):
    board = _committed()
    rows = board[(board.study == STUDY) & (board.method == "MST")].drop(columns="cells")
    src, root, out = _setup(tmp_path, rows)
    merge(out, NAME, ["MST"], HEADLINE, root=root)
    dest = root / "results" / "reference" / "benchmark" / NAME
    for f in FILES:
        assert (dest / f).read_bytes() == (src / f).read_bytes(), f
    assert (root / "plots" / "benchmark" / NAME / "park_ghosh.png").exists()


def test_a_new_method_is_ranked_in_its_study_only(tmp_path):
    board = _committed()
    mst = board[(board.study == STUDY) & (board.method == "MST")].drop(columns="cells")
    # a planted method far better than everyone on every headline metric (lower is better)
    planted = mst.assign(method="NEW", value=mst["value"] / 100, mcse=mst["mcse"] / 100)
    src, root, out = _setup(tmp_path, planted)
    merge(out, NAME, ["NEW"], HEADLINE, root=root)
    dest = root / "results" / "reference" / "benchmark" / NAME
    new = pd.read_csv(dest / "leaderboard.csv")
    others = board[board.study != STUDY].reset_index(drop=True)
    pd.testing.assert_frame_equal(new[new.study != STUDY].reset_index(drop=True), others)
    mine = new[(new.study == STUDY) & (new.method == "NEW")]
    assert len(mine) == len(mst) and (mine["rank"] == 1).all()
    # everyone else in those cells lost a place to it
    keys = ["epsilon", "metric", "method"]
    before = board[board.study == STUDY].set_index(keys)["rank"]
    after = new[(new.study == STUDY) & (new.method != "NEW")].set_index(keys)["rank"]
    ranked = before.notna()
    assert ranked.sum() > 0 and (after[ranked] == before[ranked] + 1).all()
    scores = pd.read_csv(dest / "scores.csv").set_index("method")
    assert scores.loc["NEW", "studies"] == 1
    assert len(pd.read_csv(dest / "skipped.csv")) == len(_committed("skipped.csv"))


def test_an_interval_study_is_refused(tmp_path):
    board = _committed()
    study = "bowen_liu_sim1"
    rows = board[(board.study == study) & (board.method == "MST")].drop(columns="cells")
    _, root, out = _setup(tmp_path, rows, study)
    with pytest.raises(ConfigError, match="re-run it with all its methods"):
        merge(out, NAME, ["MST"], {study: {}}, root=root)


def test_a_study_whose_committed_ranks_do_not_come_back_is_refused(tmp_path):
    board = _committed()
    rows = board[(board.study == STUDY) & (board.method == "MST")].drop(columns="cells")
    _, root, out = _setup(tmp_path, rows)
    path = root / "results" / "reference" / "benchmark" / NAME / "leaderboard.csv"
    planted = pd.read_csv(path)
    hit = planted.index[(planted.study == STUDY) & (planted.method == "PeGS")][0]
    planted.loc[hit, "rank"] += 1  # a rank the rows do not give
    planted.to_csv(path, index=False, float_format="%.6g")
    with pytest.raises(ConfigError, match="do not give their committed ranks"):
        merge(out, NAME, ["MST"], HEADLINE, root=root)


def test_a_study_s_declared_method_parameters_reach_the_method_and_the_report(monkeypatch):
    from harness.benchmark import command

    compose = command.compose_config

    def declared(overrides):
        composed = compose(overrides)
        composed["study"]["benchmark"]["methods"] = {"AIM": {"rounds": 7, "max_iters": 100}}
        return composed

    monkeypatch.setattr(command, "compose_config", declared)
    args = command.parse_args(["methods=[MST,AIM]", "studies=[bowen_liu_sim1]",
                               "replicates=2", "scenarios=first"])
    runs, _ = plan(args)
    roster = runs[0]["config"]["study"]["roster"]
    assert roster["AIM"]["inner"] == {"synthesizer": "aim", "rounds": 7, "max_iters": 100}
    assert roster["MST"]["inner"] == {"synthesizer": "mst"}
    assert runs[0]["interface"]["settings"] == "AIM: rounds=7, max_iters=100"
