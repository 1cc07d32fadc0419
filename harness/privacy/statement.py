"""The plain statement of what "equal ε" means in a set of result rows (issue 24 item 3), for
reports: under which neighbour relation each private method is calibrated, and which methods
are (ε, δ)-DP with δ > 0 and so compared with pure ε-DP ones at a weaker guarantee."""

from __future__ import annotations

import pandas as pd

from .ledger import ADD_REMOVE, RELATIONS


def _names(methods) -> str:
    return ", ".join(str(m) for m in methods)


def privacy_statement(rows: pd.DataFrame) -> str:
    """One or two sentences on the privacy of the private methods of ``rows`` (result rows or
    aggregates with ``method``, ``epsilon``, ``relation`` and ``delta`` columns; non-private
    rows, with no ε, are left out)."""
    private = rows[rows["epsilon"].notna()] if "epsilon" in rows else rows
    if private.empty:
        return "No private method is in these results."
    if "relation" not in private or "delta" not in private:
        return ("These results do not record the neighbour relation and δ of each method "
                "(made before rows carried them).")
    per_method = private.groupby("method", sort=False)[["relation", "delta"]].agg(
        lambda s: tuple(sorted(set(s.dropna()))))
    by_relation = {r: [m for m, rel in per_method["relation"].items() if r in rel]
                   for r in RELATIONS}
    present = {r: ms for r, ms in by_relation.items() if ms}
    if len(present) == 1:
        (relation, _), = present.items()
        first = (f"Every private method is calibrated under {relation} neighbours, so rows at "
                 f"the same ε are at the same privacy.")
    else:
        parts = "; ".join(f"{_names(ms)}: {r}" for r, ms in present.items())
        first = (f"The private methods are calibrated under different neighbour relations "
                 f"({parts}): an ε-DP guarantee under {ADD_REMOVE} is only a 2ε-DP guarantee "
                 f"under substitution, so rows at the same ε are not at the same privacy "
                 f"(study.relation calibrates every method under one).")
    approx = {m: [d for d in ds if d > 0] for m, ds in per_method["delta"].items()}
    approx = {m: ds for m, ds in approx.items() if ds}
    pure = [m for m in per_method.index if m not in approx]
    if not approx:
        return f"{first} Every private method is pure ε-DP (δ = 0)."
    deltas = sorted({d for ds in approx.values() for d in ds})
    stated = ", ".join(f"{d:g}" for d in deltas)
    if not pure:
        return f"{first} Every private method is (ε, δ)-DP, at δ = {stated}."
    return (f"{first} {_names(approx)} {'is' if len(approx) == 1 else 'are'} (ε, δ)-DP at "
            f"δ = {stated} and {'is' if len(approx) == 1 else 'are'} compared with pure ε-DP "
            f"methods ({_names(pure)}) at the same ε: an (ε, δ) guarantee is weaker than pure "
            f"ε-DP at that ε (it may fail with probability up to δ).")
