"""A study whose report reads another profile than ``paper``
(``harness.paper.StudyParts.report_profile``): ``harness report`` collects that profile's sweep,
not profile=paper's, and the rendered report names the profile and how many of profile=paper's
replicates it shows (harness/paper.py, harness/report.py)."""

from __future__ import annotations

import json

import pytest

from harness import paper as paper_mod
from harness import report
from harness.errors import ConfigError
from harness.paper import Paper, StudyParts

STUDY = "example_survey"
TEMPLATE = (f"# {{{{title}}}}\n\n{{{{replicates {STUDY}}}}}\n\n"
            f"({{{{replicates {STUDY} part=count}}}})\n\n{{{{timings}}}}\n")


def test_a_study_read_at_another_profile_is_collected_there_and_says_so(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "experiments" / "tiny").mkdir(parents=True)
    (root / "experiments" / "tiny" / "report.md").write_text(TEMPLATE, encoding="utf-8")
    tiny = Paper(name="tiny", title="A tiny paper",
                 studies={STUDY: StudyParts(report_profile="quick")})
    monkeypatch.setattr(paper_mod, "load_paper", lambda name: tiny)
    sweeps = root / "sweeps"
    overrides = [f"out_dir={sweeps}", "study.replicates.quick=12",
                 "study.replicates.paper=1000", "executor.n_jobs=1"]
    out = report.collect("tiny", overrides, root=root, plots=False)
    assert (sweeps / STUDY / "quick" / "timings.jsonl").exists()
    assert not (sweeps / STUDY / "paper").exists()  # the 1000-replicate sweep never ran
    run = json.loads((out / STUDY / "run.json").read_text())
    assert (run["profile"], run["replicates"], run["paper_replicates"]) == ("quick", 12, 1000)
    text = report.render(report.read_collected("tiny", root),
                         (root / "experiments" / "tiny" / "report.md").read_text())
    print(text)
    assert "profile=quick: 12 of profile=paper's 1000 replicates × " in text
    assert "| 12 (profile=quick) |" in text
    assert "\n(profile=quick: 12 of profile=paper's 1000 replicates)\n" in text  # part=count


def test_a_study_read_at_profile_paper_keeps_its_run_file_and_wording(tmp_path, monkeypatch):
    """The default (``report_profile="paper"``): run.json has no ``paper_replicates`` and the
    report's wording is unchanged, so collected reports of other papers stay byte for byte."""
    root = tmp_path / "repo"
    (root / "experiments" / "tiny").mkdir(parents=True)
    (root / "experiments" / "tiny" / "report.md").write_text(TEMPLATE, encoding="utf-8")
    tiny = Paper(name="tiny", title="A tiny paper", studies={STUDY: StudyParts()})
    monkeypatch.setattr(paper_mod, "load_paper", lambda name: tiny)
    out = report.collect("tiny", [f"out_dir={root / 'sweeps'}", "study.replicates.paper=12",
                                  "executor.n_jobs=1"], root=root, plots=False)
    run = json.loads((out / STUDY / "run.json").read_text())
    assert run["profile"] == "paper" and "paper_replicates" not in run
    text = report.render(report.read_collected("tiny", root),
                         (root / "experiments" / "tiny" / "report.md").read_text())
    assert "\n12 replicates × " in text and "profile=" not in text
    assert "\n(12 replicates)\n" in text  # part=count
    bad = TEMPLATE.replace("part=count", "part=grid")
    with pytest.raises(ConfigError, match="part='grid' is not allowed"):
        report.render(report.read_collected("tiny", root), bad)
