"""Shared pieces of the study tests: one profile=ci sweep of a study, its claim verdicts
against those the paper profile gave, and the stored files of a sweep."""

import contextlib
import io
from pathlib import Path

import pandas as pd

from harness import config
from harness.claims import UNDECIDED, evaluate_claims, format_claims
from harness.engine.aggregate import aggregate, read_rows
from harness.engine.store import TMP_PREFIX
from harness.engine.sweep import run_sweep


def ci_sweep(study: str, out) -> tuple[dict, object, object]:
    """Run ``study`` at profile=ci into ``out``; return (config, rows, metrics). The sweep runs
    its tasks in the test's own process (``executor.n_jobs=1``): the suite's two xdist workers
    already keep both cores busy, and joblib workers of their own would only add their start-up
    imports and the pickling of every task's rows (5–13 % more CPU, measured on two sweeps);
    the rows are the same for any number of workers (tests/harness/engine/)."""
    cfg = config.load([f"study={study}", "profile=ci", f"out_dir={out}", "executor.n_jobs=1"])
    summary = run_sweep(cfg, progress=False)
    assert not summary.failed, summary.failed[:1]
    rows = read_rows(cfg)
    return cfg, rows, aggregate(cfg, rows)


REPORT = Path(__file__).resolve().parents[1] / "results" / "reference"


def paper_verdicts(study: str, paper: str | None = None) -> dict[str, str]:
    """The claims' verdicts at profile=paper, as ``harness report`` collected them
    (``results/reference/<paper>/report/<study>/claims.csv``; the paper is found from the
    study's name when not given): no verdict is typed by hand."""
    if paper is None:
        found = sorted(REPORT.glob(f"*/report/{study}/claims.csv"))
        assert len(found) == 1, f"{study}: {len(found)} collected reports ({found})"
        path = found[0]
    else:
        path = REPORT / paper / "report" / study / "claims.csv"
    table = pd.read_csv(path, dtype=str)
    return dict(zip(table["id"], table["verdict"], strict=True))


def assert_verdicts(claims, metrics, study: str, may_be_undecided: tuple[str, ...] = (), *,
                    paper: str | None = None) -> None:
    """The ci run never contradicts the paper profile: every claim decided at profile=paper gets
    the same verdict at ci, except the claims in ``may_be_undecided`` (their statistic sits within
    2 MCSE of the threshold at the ci count), which may also be UNDECIDED there; ``paper`` names
    the paper package whose report holds the paper-profile verdicts (default: found from the
    study's name). A claim
    UNDECIDED at profile=paper constrains nothing. Both tables are printed for the log."""
    table = evaluate_claims(claims, metrics)
    print(format_claims(table))
    got = dict(zip(table["id"], table["verdict"], strict=True))
    at_paper = paper_verdicts(study, paper)
    print("at profile=paper:", at_paper)
    assert set(got) == set(at_paper)
    assert set(may_be_undecided) <= set(got)
    for cid, verdict in at_paper.items():
        allowed = {verdict, UNDECIDED} if cid in may_be_undecided else {verdict}
        if verdict != UNDECIDED:
            assert got[cid] in allowed, (cid, got[cid], verdict)


def stored_files(root: Path) -> dict[str, bytes]:
    """Every stored table file of a sweep directory (rows, diagnostics, replicate metrics), by
    its path under the directory: sweeps that must agree bit for bit compare these. Temporary
    files of interrupted writes (``.tmp-*``, never read) are left out."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for folder in ("tasks", "diagnostics", "replicate_metrics")
            for p in sorted((Path(root) / folder).glob("*.parquet"))
            if not p.name.startswith(TMP_PREFIX)}


def cli_main(*argv) -> tuple[int, str, str]:
    """Run ``harness.cli.main`` in this process; return (status, stdout, stderr)."""
    from harness import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv))
    return status, out.getvalue(), err.getvalue()


def assert_bad_run_input(out: Path, argv, words) -> None:
    """``harness run <argv>`` into ``out`` fails with exit status 2, one stderr line starting
    ``error: `` that holds every word of ``words``, no traceback, and writes nothing."""
    status, stdout, err = cli_main("run", *argv, f"out_dir={out}")
    assert status == 2, stdout + err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for w in words:
        assert w in lines[0], lines[0]
    assert not Path(out).exists() or not any(Path(out).iterdir())
