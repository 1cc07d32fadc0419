"""The report templates (``experiments/<p>/report.md``) type no measurement by hand, and the
rendered reports (``docs/<p>.md``) are readable and name only what a clone has (issues 23, 25).

**The number rule.** A *number* is a run of digits, with ``.`` or ``,`` between digits and an
optional exponent (``0.953``, ``200,000``, ``1e-5``). In a template's prose every number must
be one of:

1. inside a placeholder ``{{...}}``: a result (``{{metric ...}}``, ``{{value ...}}``,
   ``{{table ...}}``, ...) or a value quoted from the paper (``{{paper TEXT}}``);
2. inside a code span or a link target: the name of a file, a command or a config key;
3. part of a name: a letter, ``_`` or a letter and a hyphen directly before it (``S4``,
   ``sim1``, ``log10``, ``E1``, ``STEPS-2``), or directly after it one lowercase letter or an
   ordinal suffix (claim ``4d``, ``2nd``);
4. a label: after Table, Figure, Fig., Eq., §, Section, Algorithm, Theorem, Lemma, Appendix,
   Simulation, Sim, Scenario, Study, Field, Step, issue, page, ... including lists and ranges
   ("Tables 3 and 4", "Figs. 5–9", "§4.3–4.4"), or an ordered-list marker starting a line;
5. a year in a citation: 19xx or 20xx after a capitalised name or "et al.", or closed by ``)``,
   ``;`` or ``,`` ("Bowen & Liu (2020)", "Witten, Friedman & Simon 2011;");
6. the integer 0 or 1, the identities of formulas ("[0, 1]", "1 − λ", "λ → 0");
7. declared in ``experiments/<p>/report_numbers.yaml``: it lies inside an occurrence, on the same
   line, of a declared phrase (``text``) that comes with its ``reason`` (the paper's design, a
   constant of the method). Every declared phrase must still occur in the template.

Everything else (a timing, a count, a tolerance, a z-value, a verdict of an earlier sweep) is a
measurement typed by hand, which goes stale when results are re-collected: make it a
placeholder, or say it without the number.
"""

from __future__ import annotations

import re

import pytest
import yaml

from harness import report

PAPERS = ["bowen_liu", "park_ghosh", "hu_savitsky_williams", "steps", "bi_shen"]
#: the lines of a rendered report before its appendix (issue 25: "at most ~600")
MAX_LINES_BEFORE_APPENDIX = 600

NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:e[-+−]?\d+)?")
PLACEHOLDER = re.compile(r"\{\{.*?\}\}", re.S)
CODE = re.compile(r"`[^`\n]*`")
LINK_TARGET = re.compile(r"\]\([^)\n]*\)")
LABEL_WORD = (r"(?:§§?|Tables?|Figures?|Figs?\.?|Eqs?\.|Equations?|Sections?|Sec\.|Algorithms?|"
              r"Theorems?|Lemmas?|Corollar(?:y|ies)|Propositions?|Assumptions?|Examples?|"
              r"Remarks?|Steps?|Appendix|Simulations?|Sims?|Scenarios?|Study|Fields?|[Ii]ssues?|"
              r"Definitions?|pp?\.|pages?|Chapter|Models?|Case|[Cc]laims?)")
LABEL_ITEM = r"\(?[\dA-Z]+(?:[.–-]\d+)*[a-z]?\)?"
LABEL_BEFORE = re.compile(LABEL_WORD + r"\s*\(?(?:" + LABEL_ITEM
                          + r"\s*(?:,|and|&|–|-|to|or)\s*\(?)*$")
ORDINAL_OR_ID = re.compile(r"(?:st|nd|rd|th|[a-z])(?![A-Za-z])")
YEAR = re.compile(r"(?:19|20)\d\d[a-z]?")
YEAR_BEFORE = re.compile(r"(?:[A-Z][\w'’.-]*|al\.)\s*,?\s*$")
ORDERED_LIST = re.compile(r"^\s*\d+\.\s")
SPEC_REFERENCE = re.compile(r"shared/|DESIGN|\b[Ss]pec(?:s|ification)?(?:'s)? ?(?:\d{3}|§|"
                            r"[A-Z]\d|REVIEW)")


def _blank(pattern: re.Pattern, text: str) -> str:
    return pattern.sub(lambda m: " " * len(m.group()), text)


def declared(paper: str) -> list[dict]:
    path = report.ROOT / "experiments" / paper / "report_numbers.yaml"
    if not path.exists():
        return []
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    for entry in entries:
        assert set(entry) == {"text", "reason"} and entry["text"] and entry["reason"], (
            f"{path}: each entry is {{text, reason}}, both non-empty: {entry}")
    return entries


def undeclared_numbers(template: str, phrases: list[str]) -> list[tuple[int, str, str]]:
    """(line, number, line text) of every number the rule above does not accept."""
    out = []
    for lineno, line in enumerate(template.split("\n"), 1):
        text = _blank(LINK_TARGET, _blank(CODE, _blank(PLACEHOLDER, line)))
        covered = set()
        for phrase in phrases:
            for m in re.finditer(re.escape(phrase), text):
                covered.update(range(m.start(), m.end()))
        for m in NUMBER.finditer(text):
            a, b = m.span()
            before, after = text[a - 1] if a else " ", text[b:]
            if set(range(a, b)) <= covered or text[a:b] in ("0", "1"):
                continue
            hyphenated = before == "-" and a > 1 and text[a - 2].isalpha()
            if before.isalpha() or before == "_" or hyphenated or ORDINAL_OR_ID.match(after):
                continue
            if after[:1].isalpha() or after[:1] == "_":  # a name such as 20K or 3fold
                out.append((lineno, m.group() + after[:1], line.strip()))
                continue
            if a == len(text) - len(text.lstrip()) and ORDERED_LIST.match(text):
                continue
            if LABEL_BEFORE.search(text[:a]):
                continue
            if YEAR.fullmatch(text[a:b]) and (YEAR_BEFORE.search(text[:a])
                                              or after[:1] in (")", ";", ",")):
                continue
            out.append((lineno, m.group(), line.strip()))
    return out


def test_the_rule_catches_measurements_and_spares_names_labels_years_and_placeholders():
    template = "\n".join([
        "Bowen & Liu (2020), Table 3, §4.2, Eqs. 9 and 10, claim 4d, S4, `n_jobs=1`.",
        "1. a list item; {{metric s metric=rmse n=40}} and {{paper 41.2%–1874.7%}}.",
        "The sweep took 12.5 s and 7 of 9 claims passed at n = 40.",
        "Witten, Friedman & Simon 2011; a 20K bin; STEPS-2 agrees to 1e-5.",
    ])
    hits = undeclared_numbers(template, ["n = 40"])
    assert [(line, num) for line, num, _ in hits] == [(3, "12.5"), (3, "7"), (3, "9"),
                                                      (4, "20K"), (4, "1e-5")]


@pytest.mark.parametrize("paper", PAPERS)
def test_template_types_no_measurement_by_hand(paper):
    template = report.template_path(paper).read_text(encoding="utf-8")
    entries = declared(paper)
    unused = [e["text"] for e in entries if e["text"] not in template]
    assert not unused, f"experiments/{paper}/report_numbers.yaml declares unused phrases {unused}"
    hits = undeclared_numbers(template, [e["text"] for e in entries])
    shown = "\n".join(f"  report.md:{line}: {num!r} in: {text[:110]}" for line, num, text in hits)
    assert not hits, (f"{len(hits)} number(s) typed by hand in experiments/{paper}/report.md "
                      f"(make them placeholders, or declare them with a reason in "
                      f"report_numbers.yaml):\n{shown}")


@pytest.mark.parametrize("paper", PAPERS)
def test_report_opens_with_a_summary_and_keeps_grids_in_an_appendix(paper):
    lines = report.docs_path(paper).read_text(encoding="utf-8").split("\n")
    sections = [line for line in lines if line.startswith("## ")]
    assert sections and sections[0] == "## Summary", (
        f"docs/{paper}.md: first section {sections[:1]}")
    appendix = next((i for i, line in enumerate(lines) if line.startswith("## Appendix")),
                    len(lines))
    assert appendix <= MAX_LINES_BEFORE_APPENDIX, (
        f"docs/{paper}.md has {appendix} lines before its appendix "
        f"(at most {MAX_LINES_BEFORE_APPENDIX})")


@pytest.mark.parametrize("paper", PAPERS)
def test_report_names_only_what_a_clone_has(paper):
    """No path under shared/, no DESIGN section and no spec section: a clone has neither; the
    report cites the paper's sections, or states the fact itself (issue 23)."""
    text = report.docs_path(paper).read_text(encoding="utf-8")
    hits = [line.strip()[:120] for line in text.split("\n") if SPEC_REFERENCE.search(line)]
    assert not hits, f"docs/{paper}.md cites files a clone does not have:\n" + "\n".join(hits)
