"""The claims framework: each qualitative conclusion of a paper is a function of the
aggregated metrics table that answers PASS, FAIL or UNDECIDED, with the numbers behind it.

* PASS / FAIL: the statistic lies beyond the claim's threshold, on the claimed side or the
  other, by more than the Monte Carlo error of the run (``decide``).
* UNDECIDED: the statistic lies within Monte Carlo error of the threshold, so this run cannot
  tell a finding of the paper from simulation noise; more replicates (``profile=paper``) can.
* A claim comparing methods that the run does not hold is NOT RUN (a subset of the roster), and
  so is a claim whose code raises :class:`MissingInput` (a metric this run did not evaluate for
  a method, e.g. a reduced ``profile=ci`` grid); its evidence is one line, ``not run: <what is
  missing>`` (:func:`not_run`).
* A claim whose code fails (a missing key, a typo) is an error (:class:`ClaimError`), never a
  silent skip.

A claim our implementation contradicts is a finding to report, never to tune away.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import ConfigError

PASS, FAIL, UNDECIDED, NOT_RUN = "PASS", "FAIL", "UNDECIDED", "NOT RUN"
VERDICTS = (PASS, FAIL, UNDECIDED)
#: Monte Carlo SEs a statistic must clear its threshold by to be decided (two-sided ~95 %)
Z_DECIDE = 2.0


class ClaimError(ConfigError):
    """A claim's code failed on the metrics (an error in the claim, not a verdict)."""


class MissingInput(LookupError):
    """Raised by a claim's code when the run holds no rows for an input it needs (a metric not
    evaluated for a method in this run): the claim is NOT RUN, its evidence this message. Only
    this class is read so; any other exception (a plain ``KeyError`` from a typo) stays an
    error."""


def one_value(rows, what: str) -> tuple[float, float]:
    """(value, mcse) of the one metrics row selected for a claim: ``rows`` empty raises
    :class:`MissingInput` (the run did not evaluate it: NOT RUN), more than one row a KeyError
    (an ambiguous selection, a claim's error); ``what`` names the selection in the message."""
    if rows.empty:
        raise MissingInput(f"no rows for {what} in this run")
    if len(rows) != 1:
        raise KeyError(f"{what}: {len(rows)} rows, expected 1")
    return float(rows["value"].iloc[0]), float(rows["mcse"].iloc[0])


@dataclass(frozen=True)
class ClaimResult:
    """A verdict (PASS, FAIL or UNDECIDED; True/False/None are read as PASS/FAIL/UNDECIDED) and
    the numbers behind it."""

    verdict: str | bool | None
    evidence: str

    def __post_init__(self):
        v = self.verdict
        if isinstance(v, (bool, np.bool_)) or v is None:
            v = {True: PASS, False: FAIL, None: UNDECIDED}[None if v is None else bool(v)]
        if v not in (*VERDICTS, NOT_RUN):
            raise ValueError(f"a claim's verdict is one of {VERDICTS}, got {self.verdict!r}")
        object.__setattr__(self, "verdict", v)

    @property
    def passed(self) -> bool | None:
        """True for PASS, False for FAIL, None otherwise."""
        return {PASS: True, FAIL: False}.get(self.verdict)


def decide(statistic: float, threshold: float, mcse: float, *, above: bool = True,
           z: float = Z_DECIDE) -> str:
    """PASS if ``statistic`` lies beyond ``threshold`` on the claimed side (above it when
    ``above``, else below) by more than ``z`` Monte Carlo SEs, FAIL if it lies on the other side
    by more than that, UNDECIDED in between. A NaN MCSE is read as 0 (an exact statistic)."""
    se = 0.0 if mcse is None or not np.isfinite(mcse) else float(mcse)
    margin = (statistic - threshold) if above else (threshold - statistic)
    if not np.isfinite(margin):
        return UNDECIDED
    if margin > z * se or (se == 0 and margin > 0):
        return PASS
    if margin < -z * se or (se == 0 and margin < 0):
        return FAIL
    return UNDECIDED


def all_of(*verdicts: str) -> str:
    """The verdict of a claim made of parts that must all hold: FAIL if any part fails, PASS if
    every part passes, else UNDECIDED."""
    if FAIL in verdicts:
        return FAIL
    return PASS if all(v == PASS for v in verdicts) else UNDECIDED


def any_of(*verdicts: str) -> str:
    """The verdict of a claim that holds if any part holds."""
    if PASS in verdicts:
        return PASS
    return FAIL if all(v == FAIL for v in verdicts) else UNDECIDED


def not_run(*what: str) -> ClaimResult:
    """The verdict of a claim whose inputs this run lacks: NOT RUN, with the one-line evidence
    ``not run: <what>`` (the methods that did not run, or what :class:`MissingInput` said)."""
    text = ", ".join(" ".join(str(w).split()) for w in what)
    return ClaimResult(NOT_RUN, f"not run: {text}")


@dataclass(frozen=True)
class Claim:
    id: str
    text: str  # the paper's statement, with its section
    check: Callable[[pd.DataFrame], ClaimResult]
    methods: tuple[str, ...] = ()  # methods the claim compares

    def evaluate(self, metrics: pd.DataFrame) -> ClaimResult:
        ran = set(metrics["method"].unique()) if self.methods else set()
        missing = [m for m in self.methods if m not in ran]
        if missing:
            return not_run(*missing)
        try:
            return self.check(metrics)
        except MissingInput as exc:
            return not_run(str(exc))
        except Exception as exc:  # noqa: BLE001 - a failing claim is an error, named
            first = str(exc).strip().splitlines()
            raise ClaimError(f"claim {self.id}: its code failed ({type(exc).__name__}"
                             f"{': ' + first[0] if first else ''})") from exc


def evaluate_claims(claims, metrics: pd.DataFrame) -> pd.DataFrame:
    out = []
    for c in claims:
        r = c.evaluate(metrics)
        out.append({"id": c.id, "verdict": r.verdict, "passed": r.passed, "claim": c.text,
                    "evidence": r.evidence})
    return pd.DataFrame(out, columns=["id", "verdict", "passed", "claim", "evidence"])


def format_claims(table: pd.DataFrame) -> str:
    lines = []
    for row in table.itertuples():
        lines.append(f"[{row.verdict}] {row.id}: {row.claim}")
        lines.append(f"       {row.evidence}")
    lines.append(summary_line(table))
    return "\n".join(lines)


def summary_line(table: pd.DataFrame) -> str:
    counts = table["verdict"].value_counts()
    n = int(len(table) - counts.get(NOT_RUN, 0))
    parts = [f"{int(counts.get(v, 0))} {v}" for v in VERDICTS]
    not_run = f"; {int(counts[NOT_RUN])} not run (inputs missing)" if NOT_RUN in counts else ""
    return f"{n} claims: {', '.join(parts)}{not_run}"


# --- Monte Carlo helpers for claims over many cells -------------------------------------------
def ratio_mcse(a, b, sa, sb):
    """Delta-method MCSE of a/b for independent estimates a, b with MCSEs sa, sb."""
    return np.abs(a / b) * np.sqrt((sa / a) ** 2 + (sb / b) ** 2)


def median_with_mcse(values: pd.Series, ses: pd.Series) -> tuple[float, float]:
    """The median over cells and the MCSE of the middle cell (for an even count: the mean of the
    two middle cells, MCSE hypot/2). An approximation: it ignores which cell is in the middle."""
    order = values.dropna().sort_values()
    k = len(order)
    i, j = order.index[(k - 1) // 2], order.index[k // 2]
    if i == j:
        return float(order.loc[i]), float(ses.loc[i])
    return (float((order.loc[i] + order.loc[j]) / 2),
            float(np.hypot(ses.loc[i], ses.loc[j]) / 2))


def decide_cells(statistic, mcse, threshold: float, above: bool = True) -> list[str]:
    """One verdict (``decide``) per cell of a statistic array against a threshold."""
    s, e = np.ravel(np.asarray(statistic, float)), np.ravel(np.asarray(mcse, float))
    return [decide(a, threshold, b, above=above) for a, b in zip(s, e, strict=True)]


def most_of(verdicts: list[str], more_than: float = 0.5) -> tuple[str, str]:
    """"More than ``more_than`` of the cells": PASS if the PASS cells already are, FAIL if they
    cannot be even with every UNDECIDED cell, else UNDECIDED; and the counts as text."""
    k = len(verdicts)
    n_pass, n_fail = verdicts.count(PASS), verdicts.count(FAIL)
    n_und = k - n_pass - n_fail
    if n_pass / k > more_than:
        v = PASS
    elif (n_pass + n_und) / k <= more_than:
        v = FAIL
    else:
        v = UNDECIDED
    return v, f"{n_pass}/{k} cells PASS, {n_fail} FAIL, {n_und} UNDECIDED"


def count_verdicts(verdicts: list[str]) -> str:
    """'a PASS/b FAIL/c UND' of a list of cell verdicts."""
    return (f"{verdicts.count(PASS)} PASS/{verdicts.count(FAIL)} FAIL/"
            f"{verdicts.count(UNDECIDED)} UND")
