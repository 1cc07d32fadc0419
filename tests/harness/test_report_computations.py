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
