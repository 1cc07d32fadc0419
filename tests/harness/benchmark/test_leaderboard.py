"""The benchmark's leaderboard (harness/benchmark/leaderboard.py): ties within 2 Monte Carlo
SEs, the sum of per-study ranks, the interval metrics relative to Ori, the columns."""

import numpy as np
import pandas as pd
import pytest

from harness.benchmark import leaderboard as lb


def cell(values, mcse, direction="lower", study="s", methods=None, privacy=1.0):
    methods = methods or [f"M{i}" for i in range(len(values))]
    return pd.DataFrame({"paper": "p", "study": study, "scenario": "n=1", "epsilon": privacy,
                         "relation": "add/remove", "method": methods, "metric": "x",
                         "value": values, "mcse": mcse, "privacy": privacy,
                         "direction": direction})


def test_methods_within_two_mcse_tie_and_beyond_do_not():
    # 0.10 vs 0.12: |diff| 0.02 < 2·√2·0.01 = 0.028, a tie; 0.20 is beaten by both
    ranked = lb.rank_cells(cell([0.10, 0.12, 0.20], [0.01, 0.01, 0.01]))
    assert ranked["rank"].tolist() == [1, 1, 3]
    # a smaller Monte Carlo error separates the same values
    assert lb.rank_cells(cell([0.10, 0.12, 0.20], [0.001] * 3))["rank"].tolist() == [1, 2, 3]
    # higher is better reverses the order
    assert lb.rank_cells(cell([0.10, 0.12, 0.20], [0.001] * 3, "higher"))["rank"].tolist() == \
        [3, 2, 1]


def test_non_private_rows_and_unranked_metrics_get_no_rank():
    rows = pd.concat([cell([0.1, 0.2], [0.001, 0.001]),
                      cell([0.05], [0.001], methods=["Ori"], privacy=np.nan),
                      cell([0.9, 0.8], [0.001, 0.001], direction=None)])
    ranked = lb.rank_cells(rows.reset_index(drop=True))
    assert ranked["rank"].tolist()[:2] == [1, 2]
    assert ranked["rank"].iloc[2:].isna().all()


def test_overall_score_is_the_sum_of_study_ranks():
    rows = pd.concat([
        cell([0.1, 0.2, 0.3], [0.001] * 3, study="a", methods=["A", "B", "C"]),
        cell([0.3, 0.1, 0.2], [0.001] * 3, study="b", methods=["A", "B", "C"]),
        cell([0.1, 0.1], [0.001] * 2, study="c", methods=["A", "C"]),
    ], ignore_index=True)
    ranks = lb.study_ranks(lb.rank_cells(rows))
    got = ranks.set_index(["study", "method"])["study_rank"]
    assert got[("a", "A")] == 1 and got[("b", "A")] == 3 and got[("c", "A")] == 1
    assert got[("c", "C")] == 1  # a tie shares the smaller place
    scores = lb.overall_scores(ranks).set_index("method")
    assert scores.loc["A", "score"] == 1 + 3 + 1 and scores.loc["A", "studies"] == 3
    assert scores.loc["B", "score"] == 2 + 1 and scores.loc["B", "studies"] == 2
    assert scores.loc["C", "score"] == 3 + 2 + 1
    assert lb.overall_scores(ranks)["method"].tolist() == ["B", "A", "C"]  # best first
    # with benchmarked methods A and C: their scores over the studies both ran on (a, b, c);
    # B, a reference method, gets no score and comes after them by its mean study rank
    focused = lb.overall_scores(ranks, focus={"A", "C"}).set_index("method")
    assert focused.loc["A", "score"] == 1 + 3 + 1 and focused.loc["C", "score"] == 3 + 2 + 1
    assert np.isnan(focused.loc["B", "score"]) and focused.loc["B", "mean_study_rank"] == 1.5
    assert focused.index.tolist() == ["A", "C", "B"]
    # a benchmarked method missing a study: the others are scored over the common studies only
    two = lb.overall_scores(ranks, focus={"A", "B"}).set_index("method")
    assert two.loc["A", "score"] == 1 + 3 and two.loc["B", "score"] == 2 + 1


def test_interval_rows_give_coverage_error_and_ratios_to_ori():
    metrics = pd.DataFrame({
        "scenario": "n=1", "estimand": "mu", "m": 1,
        "method": ["Ori"] * 3 + ["X"] * 3,
        "privacy": [np.nan] * 3 + [1.0] * 3, "epsilon": [np.nan] * 3 + [1.0] * 3,
        "metric": ["coverage", "width", "rmse"] * 2,
        "value": [0.95, 2.0, 0.5, 0.80, 3.0, 1.0],
        "mcse": [0.01, 0.02, 0.01, 0.02, 0.04, 0.02]})
    rows = lb.study_rows(metrics, paper="p", study="s", original="Ori", headline=None,
                         relations={"X": "substitution"}).set_index(["method", "metric"])
    assert rows.loc[("X", "coverage_error:mu"), "value"] == pytest.approx(0.15)
    assert rows.loc[("X", "width_rel:mu"), "value"] == pytest.approx(1.5)
    assert rows.loc[("X", "width_rel:mu"), "mcse"] == pytest.approx(0.02)
    assert rows.loc[("X", "rmse_rel:mu"), "value"] == pytest.approx(2.0)
    assert rows.loc[("X", "coverage:mu"), "direction"] is None
    assert rows.loc[("X", "rmse_rel:mu"), "relation"] == "substitution"


def test_headline_metrics_and_leaderboard_columns():
    metrics = pd.DataFrame({"scenario": "n=1", "estimand": "", "m": [1, 1, 5, 1],
                            "method": ["A", "B", "B", "C"], "privacy": 1.0, "epsilon": 1.0,
                            "metric": ["ks", "ks", "ks", "other"], "value": [0.1, 0.9, 0.2, 5],
                            "mcse": 0.001})
    part = lb.study_rows(metrics, paper="p", study="s", original=None,
                         headline={"ks": "lower"}, relations={})
    board, ranks, scores = lb.leaderboard([part])
    assert list(board.columns) == lb.COLUMNS == [
        "paper", "study", "scenario", "epsilon", "relation", "method", "metric", "value",
        "mcse", "rank"]
    # B at its whole release (m = 5): 0.2; "other" is not a headline metric
    assert board.set_index("method")["value"].to_dict() == {"A": 0.1, "B": 0.2}
    assert board.set_index("method")["rank"].to_dict() == {"A": 1, "B": 2}


def test_methods_meet_at_equal_realised_epsilon_with_nested_m():
    # a nested-m method (sets at ε/set: m = 1 at ε 3.6, m = 10 at ε 36) meets the benchmarked
    # X at ε 3.6 only; the cell X is absent from is not ranked
    metrics = pd.DataFrame({"scenario": "n=1", "estimand": "", "m": [1, 10, 1],
                            "method": ["FBS", "FBS", "X"], "privacy": 1.8,
                            "epsilon": [3.6, 36.0, 2 * 1.8], "metric": "ks",
                            "value": [0.1, 0.05, 0.3], "mcse": 0.001})
    part = lb.study_rows(metrics, paper="p", study="s", original=None,
                         headline={"ks": "lower"}, relations={})
    board, _, scores = lb.leaderboard([part], focus={"X"})
    got = board.set_index(["method", "epsilon"])["rank"]
    assert got[("FBS", 3.6)] == 1 and got[("X", 3.6)] == 2
    assert np.isnan(got[("FBS", 36.0)])
    # X is the benchmarked method: it gets the score; the reference FBS its mean study rank
    scores = scores.set_index("method")
    assert scores.loc["X", "score"] == 2 and np.isnan(scores.loc["FBS", "score"])
    assert scores.loc["FBS", "mean_study_rank"] == 1


def test_summary_averages_over_estimands():
    board = pd.DataFrame({"paper": "p", "study": "s", "scenario": "n=1", "epsilon": 1.0,
                          "relation": "", "method": "X",
                          "metric": ["coverage:a", "coverage:b", "rmse_rel:a"],
                          "value": [0.9, 0.8, 2.0], "mcse": [0.01, 0.03, 0.1],
                          "rank": [np.nan, np.nan, 2.0]})
    got = lb.summarise(board).set_index("metric")
    assert got.loc["coverage", "value"] == pytest.approx(0.85)
    assert got.loc["coverage", "cells"] == 2 and got.loc["rmse_rel", "rank"] == 2


def test_coverage_findings_name_the_studies_of_each_case():
    from harness.benchmark.report import coverage_findings, coverage_holds

    def cov(study, method, values, relation="add/remove"):
        return pd.DataFrame({"paper": "p", "study": study, "scenario": "n=1",
                             "epsilon": np.arange(len(values)) + 1.0, "relation": relation,
                             "method": method, "metric": "coverage:mu", "value": values,
                             "mcse": 0.01, "rank": np.nan})

    board = pd.concat([
        cov("both", "X", [0.95, 0.94]), cov("both", "R", [0.96, 0.95]),
        cov("mine", "X", [0.95, 0.95]), cov("mine", "R", [0.5, 0.95]),
        cov("theirs", "X", [0.2, 0.95]), cov("theirs", "R", [0.95, 0.95]),
        cov("none", "X", [0.2, 0.3]), cov("none", "R", [0.5, 0.6]),
        cov("none", "Ori", [0.2, 0.2], relation=""),  # non-private: never a reference
    ], ignore_index=True)
    holds = coverage_holds(board).set_index(["study", "method"])["holds"]
    # 0.94 is within 2 MCSE (0.02) of 0.95: it holds; 0.5 does not
    assert holds[("both", "X")] == 1 and holds[("mine", "R")] == 0.5
    text = "\n".join(coverage_findings(board, ["X"]))
    line = next(x for x in text.splitlines() if x.startswith("- **X**"))
    assert "holds where the papers' methods hold: both;" in line
    assert "holds where none of the papers' methods does: mine;" in line
    assert "fails where a paper's method holds: theirs;" in line
    assert "fails, as the papers' methods do: none." in line
    assert "| Ori" not in text and "Ori |" not in text
