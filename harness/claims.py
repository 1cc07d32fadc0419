"""The claims framework (DESIGN §8): each qualitative conclusion of a paper is a function of the
aggregated metrics table that returns pass/fail and the numbers behind it. A claim our
implementation contradicts is a finding to report, never to tune away."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class ClaimResult:
    passed: bool | None  # None: not evaluable on this run (methods or grid points missing)
    evidence: str


@dataclass(frozen=True)
class Claim:
    id: str
    text: str  # the paper's statement, with its section
    check: Callable[[pd.DataFrame], ClaimResult]
    methods: tuple[str, ...] = ()  # methods the claim compares

    def evaluate(self, metrics: pd.DataFrame) -> ClaimResult:
        missing = sorted(set(self.methods) - set(metrics["method"].unique()))
        if missing:
            return ClaimResult(None, f"not evaluable: methods {missing} are not in this run")
        try:
            return self.check(metrics)
        except (KeyError, IndexError, ValueError) as exc:
            return ClaimResult(None, f"not evaluable on this grid ({type(exc).__name__}: {exc})")


def evaluate_claims(claims, metrics: pd.DataFrame) -> pd.DataFrame:
    out = []
    for c in claims:
        r = c.evaluate(metrics)
        out.append({"id": c.id, "passed": r.passed, "claim": c.text, "evidence": r.evidence})
    return pd.DataFrame(out)


def format_claims(table: pd.DataFrame) -> str:
    lines = []
    for row in table.itertuples():
        tag = {True: "PASS", False: "FAIL"}.get(row.passed, "SKIP")
        lines.append(f"[{tag}] {row.id}: {row.claim}")
        lines.append(f"       {row.evidence}")
    lines.append(summary_line(table))
    return "\n".join(lines)


def summary_line(table: pd.DataFrame) -> str:
    n_pass = int((table["passed"] == True).sum())  # noqa: E712 (None means skipped)
    n_skip = int(table["passed"].isna().sum())
    skipped = f", {n_skip} not evaluable on this run" if n_skip else ""
    return f"{n_pass} of {len(table) - n_skip} claims hold{skipped}"
