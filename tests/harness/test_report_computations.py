"""A paper's computations (``harness.paper.Computation``): tables made outside the sweep
engine, which ``harness report`` collects (re-made only when missing or when their settings
change) and renders with ``{{table}}`` and ``{{value}}`` like a study's; placeholders that need a
sweep say it has none (harness/paper.py, harness/report.py)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from harness import paper as paper_mod
from harness import report
from harness.errors import ConfigError
from harness.paper import Computation, Paper, Variant

NAME = "tiny_check"
TEMPLATE = f"""# {{{{title}}}}

{{{{table {NAME} agreement}}}}

gap: {{{{value {NAME} agreement gap quantity=b fmt=.2f}}}}
"""


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "experiments" / "tiny").mkdir(parents=True)
    (root / "experiments" / "tiny" / "report.md").write_text(TEMPLATE, encoding="utf-8")
    calls = []

    def make():
        calls.append(1)
        return {"agreement": pd.DataFrame({"quantity": ["a", "b"], "gap": [0.5, 1.25]})}

    papers = {"tiny": Paper(name="tiny", title="A tiny paper", studies={},
                            computations={NAME: Computation(make, {"n": 10}, "two numbers")})}
    monkeypatch.setattr(paper_mod, "load_paper", lambda name: papers[name])
    return root, papers, calls


def test_computation_is_collected_once_and_rendered(tiny):
    root, papers, calls = tiny
    out = report.collect("tiny", root=root, plots=False)
    assert json.loads((out / "paper.json").read_text())["computations"] == [NAME]
    assert json.loads((out / NAME / "run.json").read_text())["settings"] == {"n": 10}
    text = report.render_paper("tiny", root)
    assert "| quantity | gap |" in text and "| b | 1.25 |" in text
    assert "gap: 1.25" in text
    report.collect("tiny", root=root, plots=False)
    assert len(calls) == 1  # up to date: not re-made
    c = papers["tiny"].computations[NAME]
    papers["tiny"] = Paper(name="tiny", title="A tiny paper", studies={},
                           computations={NAME: Computation(c.make, {"n": 20}, "")})
    report.collect("tiny", root=root, plots=False)
    assert len(calls) == 2  # other settings: re-made


def test_sweep_placeholders_on_a_computation_are_one_line(tiny):
    root, _, _ = tiny
    report.collect("tiny", root=root, plots=False)
    with pytest.raises(ConfigError, match=f"'{NAME}' is a computation, not a sweep"):
        report.render(report.read_collected("tiny", root), f"{{{{claims {NAME}}}}}")


def test_a_computation_named_like_a_study_is_one_line():
    with pytest.raises(ConfigError, match="computations.x: the name is one of the paper's"):
        Paper(name="p", title="t", studies={}, variants={"x": Variant(base="s")},
              computations={"x": Computation(dict)})


def test_computation_figure_is_drawn_from_its_tables_and_rendered(tiny):
    root, papers, _ = tiny
    seen = []

    def draw(tables):
        from matplotlib.figure import Figure

        seen.append(sorted(tables))
        fig = Figure()
        fig.add_subplot().plot(tables["agreement"]["gap"])
        return fig

    c = papers["tiny"].computations[NAME]
    papers["tiny"] = Paper(name="tiny", title="A tiny paper", studies={}, computations={
        NAME: Computation(c.make, {"n": 10}, "", figures={"gaps": draw})})
    report.collect("tiny", root=root)
    assert seen == [["agreement"]]
    assert (root / "plots" / NAME / "gaps.png").stat().st_size > 0
    text = report.render(report.read_collected("tiny", root), f"{{{{figure {NAME} gaps}}}}")
    assert text.strip().endswith(f"![{NAME}: gaps](../plots/{NAME}/gaps.png)")
    with pytest.raises(ConfigError, match="unknown figure 'other'"):
        report.render(report.read_collected("tiny", root), f"{{{{figure {NAME} other}}}}")


def test_a_computation_may_collect_its_tables_into_its_studys(tmp_path, monkeypatch):
    """``Computation(study=...)``: its tables land in the study's ``tables/`` (named by the
    study in placeholders), a re-collect of the study keeps them, the settings check still
    re-makes only on a change, and a table named like one of the study's is a one-line error."""
    from harness.paper import StudyParts, Table

    base = "example_survey"
    root = tmp_path / "repo"
    (root / "experiments" / "tiny").mkdir(parents=True)
    (root / "experiments" / "tiny" / "report.md").write_text(
        f"{{{{value {base} extra gap quantity=b}}}}\n", encoding="utf-8")
    calls = []

    def make(name="extra"):
        calls.append(name)
        return {name: pd.DataFrame({"quantity": ["a", "b"], "gap": [0.5, 1.25]})}

    # the paper declares a table "count" of the study (its sweep collects the example's own)
    study = StudyParts(tables={"count": Table(dict, reads=("metrics",))})
    papers = {"tiny": Paper(name="tiny", title="t", studies={base: study}, computations={
        NAME: Computation(make, {"n": 10}, "", study=base)})}
    monkeypatch.setattr(paper_mod, "load_paper", lambda name: papers[name])
    small = ["study.replicates.paper=4", "executor.n_jobs=1", f"out_dir={tmp_path / 'sweeps'}"]
    out = report.collect("tiny", small, root=root, plots=False)
    tables = out / base / "tables"
    assert sorted(p.name for p in tables.iterdir()) == ["extra.csv"]
    assert not (out / NAME / "tables").exists()
    run = json.loads((out / NAME / "run.json").read_text())
    assert run["study"] == base and run["tables"] == ["extra"]
    assert report.render_paper("tiny", root).strip().endswith("1.25")
    (tables / "stale.csv").write_text("x\n1\n", encoding="utf-8")
    report.collect("tiny", small, studies=[base], root=root, plots=False)
    # the study's re-collect removes a stale table of its own and keeps the computation's
    assert sorted(p.name for p in tables.iterdir()) == ["extra.csv"]
    report.collect("tiny", small, root=root, plots=False)
    assert calls == ["extra"]  # up to date: not re-made
    (tables / "extra.csv").unlink()
    report.collect("tiny", small, studies=[NAME], root=root, plots=False)
    assert calls == ["extra", "extra"]  # its table was missing: re-made
    papers["tiny"] = Paper(name="tiny", title="t", studies={base: study}, computations={
        NAME: Computation(lambda: make("other"), {"n": 20}, "", study=base)})
    report.collect("tiny", small, studies=[NAME], root=root, plots=False)
    assert sorted(p.name for p in tables.iterdir()) == ["other.csv"]
    papers["tiny"] = Paper(name="tiny", title="t", studies={base: study}, computations={
        NAME: Computation(lambda: make("count"), {"n": 30}, "", study=base)})
    with pytest.raises(ConfigError, match=f"table 'count' is one of study {base}'s own tables"):
        report.collect("tiny", small, studies=[NAME], root=root, plots=False)


def test_a_computation_naming_an_unknown_study_is_one_line():
    with pytest.raises(ConfigError, match=r"computations.c.study: 'nope' is not one of the "
                                          r"paper's studies \(allowed: s\)"):
        Paper(name="p", title="t", studies={"s": paper_mod.StudyParts()},
              computations={"c": Computation(dict, study="nope")})
