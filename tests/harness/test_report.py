"""``harness report``: the committed report regenerates byte for byte from the committed files,
and a bad placeholder is a one-line error (harness/report.py)."""

from __future__ import annotations

import shutil

import pytest

from harness import report
from harness.cli import main
from harness.errors import ConfigError
from harness.paper import papers


@pytest.mark.parametrize("paper", ["bowen_liu", "park_ghosh", "hu_savitsky_williams", "steps",
                                   "bi_shen"])
def test_committed_report_regenerates_identically(paper):
    """docs/<paper>.md is exactly what the template and results/reference/<paper>/report/
    render to: no number in it was typed or edited by hand (Hu, Savitsky & Williams: with its
    variant sweeps; Bi & Shen: with its computations)."""
    committed = report.docs_path(paper).read_text(encoding="utf-8")
    assert report.render_paper(paper) == committed


def test_render_only_cli_rewrites_the_same_bytes(tmp_path, capsys):
    root = tmp_path / "repo"
    for rel in ("experiments/bowen_liu/report.md", "results/reference/bowen_liu/report",
                "docs/bowen_liu.md"):
        src = report.ROOT / rel
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    before = (root / "docs/bowen_liu.md").read_bytes()
    assert report.run_report(["paper=bowen_liu", "--render-only"], root=root) == 0
    assert (root / "docs/bowen_liu.md").read_bytes() == before


@pytest.mark.parametrize("placeholder, message", [
    ("{{table bowen_liu_sim1 no_such_table}}",
     "unknown table 'no_such_table' (allowed: supp_table_1, usable_repeats_all_methods)"),
    ("{{claim bowen_liu_sim1 9z}}", "unknown claim '9z' (allowed: 1a, 1b, 2a"),
    ("{{claims bowen_liu_sim9}}", "unknown study 'bowen_liu_sim9' (allowed: bowen_liu_sim1"),
    ("{{figure bowen_liu_sim1 figure99}}", "unknown figure 'figure99' (allowed: figure2_"),
    ("{{chart bowen_liu_sim1}}", "unknown placeholder kind 'chart' (allowed: title, table"),
    ("{{metric bowen_liu_sim1 method=LAP metric=rmse n=7}}", "was not collected"),
])
def test_unknown_placeholder_is_one_line_error(placeholder, message):
    collected = report.read_collected("bowen_liu")
    template = f"# t\n\ntext\n{placeholder}\n"
    with pytest.raises(ConfigError) as exc:
        report.render(collected, template, "report.md")
    text = str(exc.value)
    assert "\n" not in text
    assert text.startswith("report.md:4: ")
    assert message in text


def test_placeholders_render(tmp_path):
    collected = report.read_collected("bowen_liu")
    out = report.render(collected, "{{claim bowen_liu_sim1 1a}} | "
                                   "{{value bowen_liu_sim1 supp_table_1 paper n=40 pi=0.15 "
                                   "log_epsilon=-4}} | {{figure bowen_liu_sim1 figure2_pi0.15}}")
    body = out.split("\n", 1)[1]
    assert body.startswith("**PASS** (") or body.startswith("**FAIL** (")
    assert " | 0.9532 | ![bowen_liu_sim1: figure2_pi0.15](../plots/bowen_liu_sim1/" in body


def test_bad_report_input_is_one_line(capsys):
    assert main(["report", "paper=nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: paper: 'nope' is not allowed (allowed: {', '.join(papers())})"
    assert "bowen_liu" in papers() and "example" in papers()
    assert main(["report"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: report: give paper=<name>")
    assert main(["report", "paper=bowen_liu", "--bogus"]) == 2
    assert "unknown option '--bogus'" in capsys.readouterr().err


def test_bench_placeholder_states_the_whole_command_against_a_budget():
    """{{bench STUDY budget=S}} sums the benched sweep and report and says within/over; a study
    that was not benched is a one-line error, not a silent blank."""
    collected = report.read_collected("bowen_liu")
    row = collected.studies["bowen_liu_sim4"]["timings"][0]
    total = float(row["bench_sweep_seconds"]) + float(row["bench_report_seconds"])
    out = report.render(collected, "{{bench bowen_liu_sim4 budget=900}}").split("\n", 1)[1]
    assert out.startswith(f"{total:.0f} s (")
    assert out.endswith("within the budget of 900 s (15 min)")
    tight = report.render(collected, f"{{{{bench bowen_liu_sim4 budget={total / 2}}}}}")
    assert "**over** the budget" in tight
    both = report.render(collected, "{{bench bowen_liu_sim4 bowen_liu_sim3 budget=900}}")
    row3 = collected.studies["bowen_liu_sim3"]["timings"][0]
    total3 = float(row3["bench_sweep_seconds"]) + float(row3["bench_report_seconds"])
    assert f"{total + total3:.0f} s (" in both and "for the 2 studies together" in both
    hsw = report.read_collected("hu_savitsky_williams")
    with pytest.raises(ConfigError, match="hu_savitsky_williams_sdr was not benched: run harness "
                                          "bench study=hu_savitsky_williams_sdr profile=paper"):
        report.render(hsw, "{{bench hu_savitsky_williams_sdr}}", "report.md")
    with pytest.raises(ConfigError, match="budget='soon' must be a positive number"):
        report.render(collected, "{{bench bowen_liu_sim4 budget=soon}}", "report.md")


def test_cost_placeholder_gives_cpu_seconds_per_replicate_and_a_projection():
    """{{cost STUDY [replicates=N]}}: the summed task seconds of the sweep the report reads, per
    replicate, and N replicates' core-hours; a bad N is a one-line error."""
    collected = report.read_collected("bowen_liu")
    s = collected.studies["bowen_liu_sim4"]
    seconds = sum(float(r["task_seconds"]) for r in s["timings"])
    reps = int(s["run"]["replicates"])
    out = report.render(collected, "{{cost bowen_liu_sim4 replicates=7200}}").split("\n", 1)[1]
    print(out)
    assert out.startswith(f"{seconds:,.0f} task-seconds for {reps:,} replicates, "
                          f"{seconds / reps:,.0f} s of one core per replicate; 7200 replicates: ")
    assert f"about {seconds / reps * 2:,.0f} core-hours" in out  # 7200 replicates = 2 h each s
    with pytest.raises(ConfigError, match="replicates='many' must be a whole number"):
        report.render(collected, "{{cost bowen_liu_sim4 replicates=many}}", "report.md")
    # a sweep whose every task logged its CPU seconds is costed by them (wall seconds grow
    # with the machine's load); one method without them falls back to the wall seconds
    timings = s["timings"]
    s["timings"] = [{**r, "task_cpu_seconds": "10.0"} for r in timings]
    out = report.render(collected, "{{cost bowen_liu_sim4}}").split("\n", 1)[1]
    assert out.startswith(f"{10.0 * len(timings):,.0f} CPU seconds of its tasks for {reps:,} "
                          f"replicates, {10.0 * len(timings) / reps:,.0f} s of one core")
    s["timings"][0]["task_cpu_seconds"] = ""
    out = report.render(collected, "{{cost bowen_liu_sim4}}").split("\n", 1)[1]
    assert out.startswith(f"{seconds:,.0f} task-seconds for {reps:,} replicates")


@pytest.mark.parametrize("text, column, shown", [
    ("0.95387", "ours", "0.954"), ("23609.4", "ours", "23600"), ("0.000946", "ours", "0.000946"),
    ("1.978636793e-17", "alpha", "1.98e-17"), ("5000", "R", "5000"), ("-4", "log_epsilon", "-4"),
    ("101.53", "paper", "101.53"), ("0.9532", "paper_sd", "0.9532"), ("nan", "ours", "nan"),
    ("0.5933 ± 0.012", "marginal_sum", "0.5933 ± 0.012"), ("", "ours", ""),
])
def test_tables_print_three_significant_digits_but_the_papers_columns_as_printed(text, column,
                                                                                  shown):
    """{{table}} rounds a collected non-integer to three significant digits; integers, text and
    the paper's quoted columns are printed as collected (the CSV keeps every digit)."""
    assert report._table_number(text, column) == shown
    collected = report.read_collected("bowen_liu")
    out = report.render(collected, "{{table bowen_liu_sim1 supp_table_1 n=40 pi=0.15 "
                                   "log_epsilon=-4}}")
    assert "| 40 | 0.15 | -4 | 0.9532 | 0.953 |" in out


def test_paper_placeholder_renders_the_quoted_text_verbatim_and_refuses_an_empty_one():
    """{{paper TEXT}} declares a value quoted from the paper: TEXT is printed as written, words,
    '=' and spaces included; without TEXT it is a one-line error naming the template line."""
    collected = report.read_collected("bowen_liu")
    out = report.render(collected, "the paper's {{paper 41.2%–1874.7%}} and {{paper k = 20}}.")
    assert out.split("\n", 1)[1] == "the paper's 41.2%–1874.7% and k = 20."
    with pytest.raises(ConfigError) as exc:
        report.render(collected, "a\n{{paper }}\n", "report.md")
    assert str(exc.value).startswith("report.md:2: {{paper}}: expected {{paper TEXT}}")
    assert "\n" not in str(exc.value)
