"""Shared pieces of the study tests: one profile=ci sweep of a study, and its claim verdicts
against those the paper profile gave."""

from harness import config
from harness.claims import evaluate_claims, format_claims
from harness.engine.aggregate import aggregate, read_rows
from harness.engine.sweep import run_sweep


def ci_sweep(study: str, out) -> tuple[dict, object, object]:
    """Run ``study`` at profile=ci into ``out``; return (config, rows, metrics)."""
    cfg = config.load([f"study={study}", "profile=ci", f"out_dir={out}"])
    summary = run_sweep(cfg, progress=False)
    assert not summary.failed, summary.failed[:1]
    rows = read_rows(cfg)
    return cfg, rows, aggregate(cfg, rows)


def assert_verdicts(claims, metrics, expected: dict) -> None:
    """Every claim gives the verdict it gives at profile=paper (printed for the log)."""
    table = evaluate_claims(claims, metrics)
    print(format_claims(table))
    assert dict(zip(table["id"], table["passed"], strict=True)) == expected
