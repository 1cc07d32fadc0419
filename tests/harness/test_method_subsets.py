"""Every study's tables, claims and figures run on any non-empty subset of its methods (issue 23;
issue 24 item 1): on the committed profile=ci snapshot of each study with one method left out,
and with one method alone, nothing raises; a claim that compares a method that did not run is
NOT RUN with the one-line evidence ``not run: <method>``; a table that needs one is one line
``not run: ...``; the figures draw each method alone. No sweep runs here: tables, claims and
figures are functions of the metrics.

Tables that read the per-replicate rows, diagnostics or replicate metrics get an empty frame
(what the sweep hands them when no method that makes such rows ran); tables that read nothing
(an audit computed on its own) do not depend on the methods and are left out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.figure import Figure

from harness.claims import NOT_RUN, evaluate_claims
from harness.engine.check import REFERENCE_DIR
from harness.paper import NOT_RUN_COLUMN, load_paper, papers


def _studies() -> dict[str, object]:
    """study name → its StudyParts, for every study of a paper with a ci snapshot."""
    out = {}
    for paper in papers():
        for name, parts in load_paper(paper).studies.items():
            if (REFERENCE_DIR / name / "ci.parquet").exists():
                out[name] = parts
    return out


STUDIES = _studies()


def _methods(study: str) -> list[str]:
    frame = pd.read_parquet(REFERENCE_DIR / study / "ci.parquet", columns=["method"])
    return sorted(frame["method"].unique())


BASELINES = ("Ori", "ori", "MS")


def _drawn_alone(methods: list[str]) -> set[str]:
    """The methods whose one-method case also draws the figures: drawing is most of this test's
    cost (a study's figures take seconds), so it is done twice per study, where a figure loses
    the most: with the original-data baseline alone (every private method missing) and with
    one private method alone (the baselines a figure draws as reference lines missing)."""
    private = [m for m in methods if m not in BASELINES]
    baseline = [m for m in methods if m in BASELINES[:2]]
    return set(baseline[:1] + private[-1:])


#: (study, methods kept, whether the figures are drawn): claims and tables run on every case
CASES = [pytest.param(study, keep, draw, id=f"{study}-{label}")
         for study in STUDIES
         for methods in [_methods(study)]
         for label, keep, draw in [*((f"without-{m}", [x for x in methods if x != m], False)
                                     for m in methods),
                                   *((f"only-{m}", [m], m in _drawn_alone(methods))
                                     for m in methods)]]


def snapshot_metrics(study: str) -> pd.DataFrame:
    """The aggregated metrics table as a sweep gives it, rebuilt from the ci snapshot: the grid
    axes from the scenario key, ln ε, and (snapshots older than the privacy axis) the swept
    value and m; the true values are not kept in a snapshot (NaN)."""
    d = pd.read_parquet(REFERENCE_DIR / study / "ci.parquet")
    for c in ("scenario", "method", "estimand", "metric"):
        d[c] = d[c].astype(object)
    parsed = {s: dict(kv.split("=", 1) for kv in s.split(",")) for s in d["scenario"].unique()}
    for axis in next(iter(parsed.values())):
        d[axis] = d["scenario"].map({s: yaml.safe_load(p[axis]) for s, p in parsed.items()})
    if "privacy" not in d:
        d["privacy"] = d["epsilon"]
    if "m" not in d:
        d["m"] = 1
    d["log_epsilon"] = np.log(d["epsilon"])
    d["truth"] = np.nan
    return d


_METRICS: dict[str, pd.DataFrame] = {}


@pytest.mark.slow  # 212 cases; the Bowen & Liu sims' 45 took 5 min of CPU on a loaded machine
@pytest.mark.parametrize(("study", "keep", "draw"), CASES)
def test_tables_claims_and_figures_run_on_a_subset_of_methods(study, keep, draw):
    if study not in _METRICS:
        _METRICS.clear()  # one study's table at a time (the cases come study by study)
        _METRICS[study] = snapshot_metrics(study)
    full = _METRICS[study]
    metrics = full[full["method"].isin(keep)].reset_index(drop=True)
    gone = set(full["method"]) - set(keep)
    parts = STUDIES[study]

    verdicts = evaluate_claims(parts.claims, metrics)  # a claim's error would raise here
    for claim, row in zip(parts.claims, verdicts.itertuples(), strict=True):
        assert "\n" not in row.evidence, (claim.id, row.evidence)
        missing = [m for m in claim.methods if m in gone]
        if missing:
            assert row.verdict == NOT_RUN, (claim.id, row.verdict)
            assert row.evidence == f"not run: {', '.join(missing)}", (claim.id, row.evidence)
        if row.verdict == NOT_RUN:
            assert row.evidence.startswith("not run: "), (claim.id, row.evidence)

    for name, table in parts.tables.items():
        if not table.reads:
            continue
        made = table(*[metrics if r == "metrics" else pd.DataFrame() for r in table.reads])
        assert isinstance(made, pd.DataFrame), name
        present = set(keep) if "metrics" in table.reads else set()  # the other inputs are empty
        missing = [m for m in table.methods if m not in present]
        if missing:
            assert list(made.columns) == [NOT_RUN_COLUMN] and len(made) == 1, (name, made)
            assert made.iloc[0, 0] == f"not run: {', '.join(missing)}"
        if NOT_RUN_COLUMN in made.columns:
            assert len(made) == 1 and made.iloc[0, 0].startswith("not run: "), (name, made)

    for name, figure in parts.figures.items() if draw else ():
        fig = figure(metrics)
        assert fig is None or isinstance(fig, Figure), name
