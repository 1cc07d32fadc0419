"""Papers found through the package path (harness.paper) and a task fingerprint per paper
(harness.engine.sweep.code_version): editing one paper's code leaves every other paper's finished
tasks valid, editing a study's own paper package does not."""

import uuid

import pytest

from harness.engine.grid import plan_tasks
from harness.engine.study import load_study
from harness.engine.sweep import aggregation_version, code_version
from harness.paper import NO_PARTS, paper_of

STUDY = '''
import numpy as np
from harness.engine.study import Study

class Tiny(Study):
    grid_rules = {"n": {"integer": True, "minimum": 1}}
    def generate(self, scenario, rng, n_replicates):
        return None
    def estimands(self, scenario):
        return {"p": 0.5}
    def analyse(self, sets, scenario):
        return np.zeros(1), np.zeros(1)
    def method(self, label, scenario):
        raise NotImplementedError

STUDY_CLASS = Tiny
'''

PAPER = '''
from harness.paper import Paper, StudyParts
from .s1 import claims

PAPER = Paper("{name}", "A paper", {{"{name}_s1": StudyParts(claims.CLAIMS, {{"t": len}})}})
'''


@pytest.fixture
def papers(tmp_path, monkeypatch):
    """A package ``<top>`` on sys.path with two paper packages ``paper_a`` and ``paper_b`` (each
    a paper.py and a study sub-package s1 with study.py, helper.py and claims.py) and a study
    ``<top>.loose.study`` without a paper."""
    top = f"fakepapers_{uuid.uuid4().hex[:8]}"
    root = tmp_path / top
    for name in ("paper_a", "paper_b"):
        pkg = root / name / "s1"
        pkg.mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
        (root / name / "paper.py").write_text(PAPER.format(name=name))
        (pkg / "__init__.py").write_text("")
        (pkg / "study.py").write_text(STUDY)
        (pkg / "helper.py").write_text("X = 1\n")
        (pkg / "claims.py").write_text("CLAIMS = []\n")
    (root / "loose").mkdir()
    (root / "loose" / "__init__.py").write_text("")
    (root / "loose" / "study.py").write_text(STUDY)
    (root / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    code_version.cache_clear()
    aggregation_version.cache_clear()
    yield top, root
    code_version.cache_clear()
    aggregation_version.cache_clear()


def _config(module: str, name: str) -> dict:
    study = {"name": name, "module": module, "grid": {"n": [10]}, "replicates": 2,
             "roster": {"Ori": {"synthesizer": "ori"}}}
    return {"study": study, "seed": 1, "n_replicates": 2, "block_size": 2, "methods": ["Ori"]}


def _fingerprint(config: dict) -> str:
    code_version.cache_clear()
    study = load_study(config["study"])
    return plan_tasks(study, config, code_version(config["study"]["module"]))[0].fingerprint


def test_a_study_finds_its_paper_by_its_package_path(papers):
    top, _ = papers
    study = load_study(_config(f"{top}.paper_a.s1.study", "paper_a_s1")["study"])
    assert paper_of(study).name == "paper_a"
    assert study.claims() == [] and list(study.tables()) == ["t"]
    assert study.figures() == {} and study.loop_oracle() is None
    loose = load_study(_config(f"{top}.loose.study", "loose")["study"])
    assert paper_of(loose) is None
    assert loose.claims() == [] and loose.tables() == {} and loose.loop_oracle() is None
    assert NO_PARTS.claims == ()


def test_editing_another_paper_keeps_the_fingerprint_editing_its_own_changes_it(papers):
    top, root = papers
    config = _config(f"{top}.paper_a.s1.study", "paper_a_s1")
    before = _fingerprint(config)
    (root / "paper_b" / "s1" / "helper.py").write_text("X = 2\n")  # another paper's code
    (root / "paper_b" / "s1" / "study.py").write_text(STUDY + "# edited\n")
    assert _fingerprint(config) == before
    (root / "paper_a" / "s1" / "claims.py").write_text("CLAIMS = []  # reads rows only\n")
    assert _fingerprint(config) == before
    (root / "paper_a" / "s1" / "solver_bench.py").write_text("X = 3\n")  # times sweeps only
    assert _fingerprint(config) == before
    (root / "paper_a" / "s1" / "helper.py").write_text("X = 2\n")  # its own paper's code
    assert _fingerprint(config) != before


def test_aggregation_version_covers_its_own_paper_only(papers):
    top, root = papers
    module = f"{top}.paper_a.s1.study"
    before = aggregation_version(module)
    (root / "paper_b" / "s1" / "claims.py").write_text("CLAIMS = []  # other\n")
    aggregation_version.cache_clear()
    assert aggregation_version(module) == before
    (root / "paper_a" / "s1" / "claims.py").write_text("CLAIMS = []  # own\n")
    aggregation_version.cache_clear()
    assert aggregation_version(module) != before


def test_a_study_without_a_paper_is_fingerprinted_by_its_package(papers):
    top, root = papers
    config = _config(f"{top}.loose.study", "loose")
    before = _fingerprint(config)
    (root / "paper_a" / "s1" / "helper.py").write_text("X = 3\n")
    assert _fingerprint(config) == before
    (root / "loose" / "study.py").write_text(STUDY + "# edited\n")
    assert _fingerprint(config) != before
