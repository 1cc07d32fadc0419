"""docs/steps.md states a cause for every FAIL (issue 25): each claim id with a FAIL verdict in
the collected claims of the report (every study and variant) appears again in the report's
text outside the claims tables, in the findings that give its cause."""

from pathlib import Path

import pandas as pd

ROOT = Path(__file__).parents[2]
REPORT = ROOT / "results/reference/steps/report"


def test_every_fail_has_a_finding_outside_the_claims_tables():
    fails = sorted({cid for f in REPORT.glob("*/claims.csv")
                    for cid in pd.read_csv(f).query("verdict == 'FAIL'")["id"]})
    assert fails  # the report has FAILs to explain
    text = (ROOT / "docs/steps.md").read_text(encoding="utf-8")
    prose = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("|"))
    findings = prose[prose.index("## Why each FAIL"):]
    missing = [cid for cid in fails if f"`{cid}`" not in findings]
    assert not missing, f"FAIL claims without a finding in docs/steps.md: {missing}"
