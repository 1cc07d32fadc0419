"""``harness benchmark`` (harness/benchmark/command.py): bad input is one line, exit 2, nothing
written; a re-run redoes no task and writes the same leaderboard; studies without a data
interface are listed, not crashed on; the relation is forwarded as study.relation."""

import pandas as pd
import pytest

from harness.cli import main

#: a smoke run: the tests below are about the command (plans, files, re-runs), not numbers; 3
#: replicates still give every cell a Monte Carlo error for the ranks
TINY = ["profile=ci", "replicates=3", "scenarios=first", "executor.n_jobs=1"]


@pytest.mark.parametrize("argv, key", [
    (["methods=[NOPE]"], "methods: 'NOPE' is not allowed"),
    (["methods=[laplace_sanitizer]", "studies=[nope]"], "studies: 'nope' is not allowed"),
    (["methods=[privbayes]", "profile=huge"], "profile: 'huge' is not allowed"),
    (["methods=[privbayes]", "relation=sideways"], "relation: 'sideways' is not allowed"),
    (["methods=[privbayes]", "nonsense=1"], "nonsense: unknown benchmark key"),
    (["profile=ci"], "methods: give the methods"),
    (["methods=[privbayes]", "replicates=0"], "replicates: must be an integer >= 1"),
    (["methods=[tabular]"], "methods: 'tabular' is not allowed"),
    (["methods=[privbayes]", "studies=[bowen_liu_sim1]", "leave_out=[steps_sim:privbayes]"],
     "leave_out: 'steps_sim:privbayes' is not allowed"),
    (["methods=[privbayes]", "studies=[bowen_liu_sim1]", "leave_out=[bowen_liu_sim1:MST]"],
     "leave_out: 'bowen_liu_sim1:MST' is not allowed"),
])
def test_bad_input_is_one_line_and_writes_nothing(argv, key, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["benchmark", *argv, f"out_dir={out}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and key in err[0], err
    assert not out.exists()


def test_rerun_redoes_no_task_and_lists_what_cannot_run(tmp_path, capsys, monkeypatch):
    from harness.benchmark import command

    def without_interface(overrides):  # every study now declares one: drop example_survey's
        composed = compose(overrides)
        if "study=example_survey" in overrides:
            composed["study"].pop("benchmark", None)
        return composed

    compose = command.compose_config
    monkeypatch.setattr(command, "compose_config", without_interface)
    argv = ["benchmark", "methods=[privbayes,laplace_sanitizer]",
            "studies=[bowen_liu_sim1,example_survey]", *TINY, f"out_dir={tmp_path}"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "5 tasks: 0 already done, 5 run" in first
    cost = pd.read_csv(tmp_path / "benchmark" / "ci-r3-first" / "timings.csv")
    assert set(cost.method) == {"Ori", "MS", "MODIPS", "LAP", "privbayes"}
    assert (cost.replicates == 3).all() and (cost.task_seconds >= 0).all()
    root = tmp_path / "benchmark" / "ci-r3-first"
    board = (root / "leaderboard.csv").read_bytes()
    skipped = pd.read_csv(root / "skipped.csv")
    # laplace_sanitizer takes counts, not coded records; example_survey (here) no interface
    assert ("bowen_liu_sim1", "laplace_sanitizer") in set(zip(skipped.study, skipped.method,
                                                                        strict=True))
    assert set(skipped[skipped.study == "example_survey"].method) == {"privbayes",
                                                                       "laplace_sanitizer"}
    assert main(argv) == 0
    assert "5 tasks: 5 already done, 0 run" in capsys.readouterr().out
    assert (root / "leaderboard.csv").read_bytes() == board
    lead = pd.read_csv(root / "leaderboard.csv")
    assert {"Ori", "MS", "MODIPS", "LAP", "privbayes"} == set(lead.method)
    assert (root / "report.md").read_text().count("privbayes") > 1
    assert (root / "figures" / "bowen_liu.png").exists()
    face = pd.read_csv(root / "interface.csv").set_index("study")
    assert face.loc["bowen_liu_sim1", "coded_columns"] == "cell(2)"  # counts as cell codes


def test_relation_is_forwarded_to_the_studies(tmp_path, capsys):
    rc = main(["benchmark", "methods=[privbayes]", "studies=[bi_shen_s2]", "relation=substitution",
               *TINY, f"out_dir={tmp_path}"])
    if rc == 2:  # a branch whose studies do not take study.relation: refused, nothing written
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: relation: study bi_shen_s2")
        assert not (tmp_path / "benchmark").exists()
    else:
        assert rc == 0
        lead = pd.read_csv(tmp_path / "benchmark" / "ci-r3-first" / "leaderboard.csv")
        assert set(lead.dropna(subset=["epsilon"]).relation) == {"substitution"}


def test_report_benchmark_renders_docs_from_collected_files(tmp_path, capsys):
    from harness.benchmark.command import collect
    from harness.benchmark.report import render_committed
    from harness.errors import ConfigError

    assert main(["benchmark", "methods=[privbayes]", "studies=[bi_shen_s2]", *TINY,
                 f"out_dir={tmp_path / 'out'}"]) == 0
    root = tmp_path / "repo"
    collect(tmp_path / "out" / "benchmark" / "ci-r3-first", "smoke", root=root)
    assert (root / "plots" / "benchmark" / "smoke" / "bi_shen.png").exists()
    doc = render_committed("smoke", root)
    text = doc.read_text()
    assert doc == root / "docs" / "benchmark.md" and "| privbayes |" in text
    assert "../plots/benchmark/smoke/bi_shen.png" in text
    assert render_committed("smoke", root).read_text() == text  # regenerates byte for byte
    with pytest.raises(ConfigError, match="nothing collected for 'nope'"):
        render_committed("nope", root)


def test_mst_and_aim_rows_are_bit_identical_across_workers_and_a_resume(tmp_path, capsys):
    """Issue 24: MST's and AIM's task files (every row they make) are the same bytes with one
    worker or two, and after a resume that re-runs the tasks an interrupted sweep had not
    saved (their files removed, as a kill before the atomic rename leaves them).

    A test of mechanics, not statistics, so the problem is the smallest that still shows them:
    one study, bowen_liu_sim1 (its 6 tasks, MST and AIM among them, are shared by two workers;
    bi_shen_s2's task files hold no rows, its rows are in replicate_metrics/, so it added no
    comparison here), and 4 replicates (several per task: MST's and AIM's fits batched over a
    task's replicates). The resume re-runs exactly MST's and AIM's tasks, keeps the others'."""
    pytest.importorskip("mbi")

    def run(out, jobs):
        argv = ["benchmark", "methods=[MST,AIM]", "studies=[bowen_liu_sim1]", "profile=ci",
                "replicates=4", "scenarios=first", f"executor.n_jobs={jobs}", f"out_dir={out}"]
        assert main(argv) == 0, capsys.readouterr().err
        return {p.relative_to(out): p.read_bytes()
                for p in sorted(out.glob("*/ci-r4-first/tasks/*.parquet"))}

    one = run(tmp_path / "one", 1)
    method = {f: set(pd.read_parquet(tmp_path / "one" / f)["method"]) for f in one}
    assert {"MST", "AIM"} <= set().union(*method.values())
    assert run(tmp_path / "two", 2) == one
    dropped = [f for f in one if method[f] & {"MST", "AIM"}]
    assert 2 <= len(dropped) < len(one)
    for f in dropped:
        (tmp_path / "one" / f).unlink()
    capsys.readouterr()
    assert run(tmp_path / "one", 1) == one
    assert f"{len(one) - len(dropped)} already done, {len(dropped)} run" in capsys.readouterr().out


def test_a_method_whose_domain_limit_the_study_exceeds_is_listed_not_failed(tmp_path, capsys,
                                                                             monkeypatch):
    """A synthesizer declaring ``max_cells`` (the largest domain it handles) below a study's coded
    domain is listed in skipped.csv with the sizes, before anything runs; the study's
    reference methods still run and the command exits 0."""
    from harness.synthesizers.privbayes import PrivBayes

    monkeypatch.setattr(PrivBayes, "max_cells", 3, raising=False)  # sim1's cell has 2 codes
    rc = main(["benchmark", "methods=[privbayes]", "studies=[bowen_liu_sim1,bi_shen_s2]",
               *TINY, f"out_dir={tmp_path}"])
    assert rc == 0, capsys.readouterr().err
    root = tmp_path / "benchmark" / "ci-r3-first"
    skipped = pd.read_csv(root / "skipped.csv")
    row = skipped[skipped.study == "bi_shen_s2"]
    assert list(row.method) == ["privbayes"] and "at most 3 cells" in row.reason.iloc[0]
    lead = pd.read_csv(root / "leaderboard.csv")
    assert "privbayes" in set(lead[lead.study == "bowen_liu_sim1"].method)
    assert not (tmp_path / "bi_shen_s2").exists()  # nothing ran for a study left with no method


def test_the_committed_benchmark_report_regenerates_byte_for_byte(tmp_path):
    """docs/benchmark.md is written by ``harness report benchmark=<name>`` from the committed
    files only (its name is in its title), never edited by hand."""
    import re
    import shutil
    from pathlib import Path

    from harness.benchmark.report import render_committed

    committed = Path("docs/benchmark.md").read_text()
    name = re.match(r"# Benchmark \((.+)\)\n", committed).group(1)
    for part in ("results/reference/benchmark", "plots/benchmark"):
        shutil.copytree(Path(part) / name, tmp_path / part / name)
    assert render_committed(name, tmp_path).read_text() == committed


def test_leave_out_lists_the_pair_as_not_run_and_keeps_the_rest():
    """``leave_out=[study:method]``: that pair is in skipped.csv with the reason, the method
    still runs on the other studies and the other methods on that study."""
    from harness.benchmark.command import parse_args, plan

    args = parse_args(["methods=[privbayes,MST]", "studies=[bowen_liu_sim1,steps_sim]",
                       "leave_out=[steps_sim:MST]", *TINY])
    runs, skipped = plan(args)
    assert {(r["study"], tuple(r["labels"])) for r in runs} == {
        ("bowen_liu_sim1", ("privbayes", "MST")), ("steps_sim", ("privbayes",))}
    assert {"study": "steps_sim", "method": "MST",
            "reason": "left out by the command (leave_out)"} in skipped
