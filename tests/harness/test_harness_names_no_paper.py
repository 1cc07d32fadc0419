"""DESIGN §2: the harness is the reusable library, "nothing paper-specific lives here". No file
under harness/ names a study of a paper (its config name), a paper's model or its data set: those
live in experiments/<paper>/."""

import re
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"
#: names of the studies of experiments/, and of their models and data sets
STUDY_NAMES = re.compile(r"bowen_liu_sim[1-4]|bowen_liu_fertility|slomag|fertility",
                         re.IGNORECASE)


def test_no_file_under_harness_names_a_study():
    found = []
    for path in sorted(HARNESS.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if STUDY_NAMES.search(line):
                found.append(f"{path.relative_to(HARNESS.parent)}:{number}: {line.strip()}")
    assert HARNESS.is_dir() and any(HARNESS.rglob("*.py"))
    assert not found, "harness/ names a study:\n" + "\n".join(found)
