"""The tables that read the per-replicate rows, diagnostics or replicate metrics run on any
non-empty subset of a study's methods (issue 23; issue 24 item 1), on the session's profile=ci
sweeps. Apart from test_method_subsets.py (which reads only the committed snapshots) so that
pytest-xdist can run the two files on different workers."""

from __future__ import annotations

import pandas as pd
import pytest
from test_method_subsets import STUDIES

from harness.paper import NOT_RUN_COLUMN

#: studies with tables that read more than the aggregated metrics
WIDE_INPUTS = [s for s, parts in STUDIES.items()
               if any(set(t.reads) - {"metrics"} for t in parts.tables.values())]


@pytest.mark.slow
@pytest.mark.parametrize("study", WIDE_INPUTS)
def test_tables_of_rows_and_diagnostics_run_on_a_subset_of_methods(study, ci_sweep_of):
    """The tables that read the per-replicate rows, diagnostics or replicate metrics, on the
    session's profile=ci sweep (shared with the snapshot and claims tests) with one method left
    out and with one method alone: a frame, or one line naming what did not run."""
    from harness.engine.aggregate import read_diagnostics, read_replicate_metrics

    cfg, rows, metrics = ci_sweep_of(study)
    tables = {name: table for name, table in STUDIES[study].tables.items()
              if not set(table.reads) <= {"metrics"}}
    read = {"rows": lambda: rows, "metrics": lambda: metrics,
            "diagnostics": lambda: read_diagnostics(cfg),
            "replicate_metrics": lambda: read_replicate_metrics(cfg)}
    # only the inputs these tables read are read and cut to each subset (a study's rows run to
    # a million lines that most of these tables never look at)
    inputs = {r: read[r]() for r in sorted(set().union(*(t.reads for t in tables.values())))}
    methods = list(cfg["methods"])
    subsets = [[x for x in methods if x != m] for m in methods] + [[m] for m in methods]
    for keep in subsets:
        given = {k: v[v["method"].isin(keep)] if "method" in v else v for k, v in inputs.items()}
        for name, table in tables.items():
            made = table(*[given[r] for r in table.reads])
            assert isinstance(made, pd.DataFrame), (name, keep)
            missing = [m for m in table.methods if m not in keep]
            if missing:
                assert made.iloc[0, 0] == f"not run: {', '.join(missing)}", (name, keep)
            if NOT_RUN_COLUMN in made.columns:
                assert len(made) == 1 and made.iloc[0, 0].startswith("not run: "), (name, keep)
