"""Release diagnostics: the share of sets whose sanitized statistic was clamped to a bound is
stored per replicate and summarised; it matches its analytic value."""

import numpy as np
from scipy import stats

from harness import config
from harness.engine.aggregate import summarise_diagnostics
from harness.engine.sweep import run_sweep


def _expected_share(n, pi, eps, m=5):
    """E over n1 ~ Bin(n, π) of P(n1 + Lap(m/ε) ∉ (0, n))."""
    n1 = np.arange(n + 1)
    b = m / eps
    p_out = 0.5 * np.exp(-n1 / b) + 0.5 * np.exp(-(n - n1) / b)
    return float(np.sum(stats.binom.pmf(n1, n, pi) * p_out))


def test_at_bound_share_matches_its_analytic_value(tmp_path):
    cfg = config.load([
        "profile=ci", "study.replicates.ci=4000", "block_size=2000", "study.grid.n=[40]",
        "study.grid.pi=[0.15]", "study.log_epsilon=[-2,0]", "methods=[LAP,MODIPS,MD]",
        f"out_dir={tmp_path}", "executor.n_jobs=1",
    ])
    assert not run_sweep(cfg, progress=False).failed
    d = summarise_diagnostics(cfg)
    assert set(d["method"]) == {"LAP", "MODIPS"}  # MD adds no noise: no such diagnostic
    assert (tmp_path / "bowen_liu_sim1" / "ci" / "diagnostics.csv").exists()
    for row in d.itertuples():
        exp = _expected_share(40, 0.15, row.epsilon)
        assert row.n_rep == 4000
        assert abs(row.mean - exp) < 4 * row.mcse, (row.method, row.epsilon, row.mean, exp)


def test_redraw_never_sits_on_a_bound(tmp_path):
    cfg = config.load([
        "profile=ci", "study.replicates.ci=500", "study.grid.n=[40]", "study.grid.pi=[0.15]",
        "study.log_epsilon=[-2]", "methods=[LAP]", "study.postprocess=redraw",
        f"out_dir={tmp_path}", "executor.n_jobs=1",
    ])
    run_sweep(cfg, progress=False)
    assert summarise_diagnostics(cfg)["mean"].tolist() == [0.0]
