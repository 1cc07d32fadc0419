"""Variant sweeps of a paper's study (``harness.paper.Variant``): ``harness report`` runs and
collects one like a study (resumably, into its own sweep), its placeholders render, and a bad
declaration is a one-line error naming the key (harness/paper.py, harness/report.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from harness import paper as paper_mod
from harness import report
from harness.claims import Claim, ClaimResult, decide
from harness.errors import ConfigError
from harness.paper import Paper, StudyParts, Table, Variant

BASE = "example_survey"
NAME = "example_survey_ori_only"
#: the test's sweeps are small: the variant's own overrides, then the command line's
SMALL = ("study.replicates.paper=30", "executor.n_jobs=1")


def _coverage(metrics):
    """Mean coverage per method and n (a table read from the aggregated metrics)."""
    c = metrics[metrics["metric"] == "coverage"]
    return (c.groupby(["method", "n_per_stratum"], as_index=False)["value"].mean()
            .round(4))


def _ori_near_nominal(metrics):
    c = metrics[(metrics["method"] == "Ori") & (metrics["metric"] == "coverage")]
    return ClaimResult(decide(c["value"].mean(), 0.5, c["mcse"].max()),
                       f"mean Ori coverage {c['value'].mean():.3f} (> 0.5)")


VARIANT = Variant(base=BASE, overrides=("methods=[Ori]", "study.grid.n_per_stratum=[60]"),
                  claims=[Claim("ori-covers", "Ori covers", _ori_near_nominal, ("Ori",))],
                  tables={"coverage": Table(_coverage, reads=("metrics",))})

TEMPLATE = f"""# {{{{title}}}}

{{{{replicates {NAME}}}}}

{{{{table {NAME} coverage}}}}

Ori: {{{{value {NAME} coverage value method=Ori n_per_stratum=60 fmt=.2f}}}};
share: {{{{metric {NAME} method=Ori metric=coverage estimand=share_low fmt=.3f}}}}

{{{{claims {NAME}}}}}

{{{{tally {NAME}}}}}

{{{{timings}}}}
"""


def _paper(variant=VARIANT):
    return Paper(name="tiny", title="A tiny paper", studies={BASE: StudyParts()},
                 variants={NAME: variant})


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A paper ``tiny`` (the example study and one variant of it) with its template in a
    scratch repository ``root``; sweeps go to ``root/sweeps``."""
    root = tmp_path / "repo"
    (root / "experiments" / "tiny").mkdir(parents=True)
    (root / "experiments" / "tiny" / "report.md").write_text(TEMPLATE, encoding="utf-8")
    papers = {"tiny": _paper()}
    monkeypatch.setattr(paper_mod, "load_paper", lambda name: papers[name])
    return root, papers, [f"out_dir={root / 'sweeps'}", *SMALL]


def test_variant_is_collected_and_rendered_like_a_study(tiny):
    root, _, overrides = tiny
    out = report.collect("tiny", overrides, studies=[NAME], root=root, plots=False)
    sweep = root / "sweeps" / BASE / NAME  # the base study's name, the variant's sweep
    logged_tasks = [json.loads(line) for line in (sweep / "timings.jsonl").read_text().splitlines()]
    # every task logs its wall and its process's CPU seconds ({{cost}} prefers the CPU)
    assert logged_tasks and all(0 <= t["cpu_seconds"] < 60 and t["seconds"] > 0
                                for t in logged_tasks)
    timings = (out / NAME / "timings.csv").read_text().splitlines()
    assert timings[0].split(",")[:5] == ["method", "tasks", "replicates", "task_seconds",
                                         "task_cpu_seconds"]
    run = json.loads((out / NAME / "run.json").read_text())
    assert (run["study"], run["base"], run["sweep"]) == (NAME, BASE, NAME)
    assert run["methods"] == ["Ori"] and run["scenarios"] == 1 and run["replicates"] == 30
    assert run["overrides"] == list(VARIANT.overrides)
    assert json.loads((out / "paper.json").read_text())["variants"] == [NAME]
    assert (out / NAME / "tables" / "coverage.csv").exists()

    text = report.render_paper("tiny", root)
    assert "30 replicates × 1 scenario" in text
    assert "| method | n_per_stratum | value |" in text
    assert "| ori-covers | PASS | Ori covers |" in text
    assert "1 of 1 claims pass" in text
    assert f"| {NAME} | 1 of 1 | 30 |" in text  # the variant's row of the timings
    value = text.split("Ori: ", 1)[1].split(";", 1)[0]
    share = text.split("share: ", 1)[1].split("\n", 1)[0]
    assert 0.5 < float(value) <= 1 and 0 <= float(share) <= 1

    # resumable like a study: collecting again reruns no task and writes the same files
    logged = (sweep / "timings.jsonl").read_text()
    before = {p: p.read_bytes() for p in out.rglob("*.csv")}
    report.collect("tiny", overrides, studies=[NAME], root=root, plots=False)
    assert (sweep / "timings.jsonl").read_text() == logged
    assert {p: p.read_bytes() for p in out.rglob("*.csv")} == before


@pytest.mark.parametrize("variant, message", [
    (Variant(base="no_such_study"),
     "tiny paper.py: variants.example_survey_ori_only.base: 'no_such_study' is not one of the "
     "paper's studies (allowed: example_survey)"),
    (Variant(base=BASE, overrides=("sweep=mine",)),
     "variants.example_survey_ori_only.overrides: 'sweep' is fixed for a variant"),
    (Variant(base=BASE, overrides=("methods",)),
     "variants.example_survey_ori_only.overrides: 'methods' is not key=value"),
])
def test_bad_variant_declaration_is_one_line(variant, message):
    with pytest.raises(ConfigError) as exc:
        _paper(variant)
    assert "\n" not in str(exc.value) and message in str(exc.value)


def test_bad_variant_override_key_is_one_line_and_writes_nothing(tiny):
    root, papers, overrides = tiny
    papers["tiny"] = _paper(Variant(base=BASE, overrides=("study.no_such_key=1",)))
    with pytest.raises(ConfigError) as exc:
        report.run_report(["paper=tiny", *overrides], root=root)
    assert "\n" not in str(exc.value)
    assert str(exc.value).startswith(f"report: variant '{NAME}': study.no_such_key: ")
    assert not (root / "sweeps").exists()
    assert not report.report_dir("tiny", root).exists()


def _coverage_figure(metrics):
    from matplotlib.figure import Figure

    fig = Figure()
    c = _coverage(metrics)
    fig.add_subplot().bar(c["method"], c["value"])
    return fig


def test_variant_draws_its_own_figures_not_the_base_studys(tiny):
    root, papers, overrides = tiny
    papers["tiny"] = _paper(Variant(base=BASE, overrides=VARIANT.overrides,
                                    tables=VARIANT.tables,
                                    figures={"coverage_bars": _coverage_figure}))
    out = report.collect("tiny", overrides, studies=[NAME], root=root, plots=True)
    assert json.loads((out / NAME / "run.json").read_text())["figures"] == ["coverage_bars"]
    assert [p.name for p in (root / "plots").rglob("*.png")] == ["coverage_bars.png"]
    assert (root / "plots" / NAME / "coverage_bars.png").stat().st_size > 0
    text = f"{{{{figure {NAME} coverage_bars}}}}"
    (root / "experiments" / "tiny" / "report.md").write_text(text, encoding="utf-8")
    assert f"../plots/{NAME}/coverage_bars.png" in report.render_paper("tiny", root)


def test_figures_redraw_from_the_committed_data_without_a_sweep(tiny, monkeypatch, capsys):
    """``harness report --figures``: collect commits the aggregated metrics a figure is drawn
    from (figures.parquet); a redraw reads them (no sweep, even with the sweeps gone), gives
    the collected image byte for byte, and draws a changed figure function's new image."""
    import shutil

    from harness.engine import sweep as sweep_mod

    root, papers, overrides = tiny
    papers["tiny"] = _paper(Variant(base=BASE, overrides=VARIANT.overrides,
                                    tables=VARIANT.tables,
                                    figures={"coverage_bars": _coverage_figure}))
    out = report.collect("tiny", overrides, studies=[NAME], root=root, plots=True)
    png = root / "plots" / NAME / "coverage_bars.png"
    collected = png.read_bytes()
    assert (out / NAME / report.FIGURE_DATA).exists()

    shutil.rmtree(root / "sweeps")
    monkeypatch.setattr(sweep_mod, "run_and_read", lambda *a, **k: pytest.fail("a sweep ran"))
    png.unlink()
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert report.run_report(["paper=tiny", "--figures"], root=root) == 0
    assert png.read_bytes() == collected
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # read only

    def hbars(metrics):  # the figure's code changed: the redraw shows the new figure
        fig = _coverage_figure(metrics)
        fig.axes[0].set_title("changed")
        return fig

    papers["tiny"] = _paper(dataclasses.replace(papers["tiny"].variants[NAME],
                                                figures={"coverage_bars": hbars}))
    assert report.run_report(["paper=tiny", "--figures", f"--studies={NAME}"], root=root) == 0
    assert png.read_bytes() != collected
    capsys.readouterr()


def test_figures_of_a_study_without_committed_data_is_one_line(tiny):
    """--figures --studies=S where S's figure data was never committed: one line naming the
    file and the command that commits it, before anything is drawn."""
    root, papers, overrides = tiny
    papers["tiny"] = _paper(Variant(base=BASE, overrides=VARIANT.overrides,
                                    figures={"coverage_bars": _coverage_figure}))
    with pytest.raises(ConfigError) as exc:
        report.run_report(["paper=tiny", "--figures", f"--studies={NAME}"], root=root)
    text = str(exc.value)
    assert "\n" not in text and f"{NAME} has no committed figure data" in text
    assert f"--studies={NAME}" in text
    assert not (root / "plots").exists()
    with pytest.raises(ConfigError, match="--figures reads the committed files only"):
        report.run_report(["paper=tiny", "--figures", "seed=1"], root=root)
