"""Shared pieces of the study tests: one profile=ci sweep of a study, its claim verdicts
against those the paper profile gave, and the stored files of a sweep."""

import contextlib
import io
from pathlib import Path

from harness import config
from harness.claims import evaluate_claims, format_claims
from harness.engine.aggregate import aggregate, read_rows
from harness.engine.store import TMP_PREFIX
from harness.engine.sweep import run_sweep


def ci_sweep(study: str, out) -> tuple[dict, object, object]:
    """Run ``study`` at profile=ci into ``out``; return (config, rows, metrics)."""
    cfg = config.load([f"study={study}", "profile=ci", f"out_dir={out}"])
    summary = run_sweep(cfg, progress=False)
    assert not summary.failed, summary.failed[:1]
    rows = read_rows(cfg)
    return cfg, rows, aggregate(cfg, rows)


def assert_verdicts(claims, metrics, expected: dict, undecided: tuple[str, ...] = ()) -> None:
    """Every claim gives the verdict it gives at profile=paper (printed for the log), except the
    claims listed in ``undecided``: their statistic sits within Monte Carlo error of its
    threshold at this replicate count, so the caller asserts that instead."""
    table = evaluate_claims(claims, metrics)
    print(format_claims(table))
    got = dict(zip(table["id"], table["passed"], strict=True))
    assert set(undecided) <= set(got)
    assert ({k: v for k, v in got.items() if k not in undecided}
            == {k: v for k, v in expected.items() if k not in undecided})


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
