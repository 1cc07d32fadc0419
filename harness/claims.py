"""The claims framework (DESIGN §8): each qualitative conclusion of a paper is a function of the
aggregated metrics table that returns pass/fail and the numbers behind it. A claim our
implementation contradicts is a finding to report, never to tune away."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class ClaimResult:
    passed: bool
    evidence: str


@dataclass(frozen=True)
class Claim:
    id: str
    text: str  # the paper's statement, with its section
    check: Callable[[pd.DataFrame], ClaimResult]
    operationalisation: str = ""  # how the statement is turned into a test

    def evaluate(self, metrics: pd.DataFrame) -> ClaimResult:
        return self.check(metrics)


def evaluate_claims(claims, metrics: pd.DataFrame) -> pd.DataFrame:
    out = []
    for c in claims:
        r = c.evaluate(metrics)
        out.append({"id": c.id, "passed": r.passed, "claim": c.text, "evidence": r.evidence})
    return pd.DataFrame(out)


def format_claims(table: pd.DataFrame) -> str:
    lines = []
    for row in table.itertuples():
        lines.append(f"[{'PASS' if row.passed else 'FAIL'}] {row.id}: {row.claim}")
        lines.append(f"       {row.evidence}")
    n_pass = int(table["passed"].sum())
    lines.append(f"{n_pass} of {len(table)} claims hold")
    return "\n".join(lines)
