"""Bowen & Liu (2020) case study (UCI Fertility) end to end: table codec, TVD against a hand
computation, the SVM pipeline on the original data, ledgers, per-replicate metric rows and the
claims at profile=ci against the verdicts at profile=paper (printed beside the paper's numbers)."""

import builtins
import dataclasses
import itertools

import numpy as np
import pandas as pd
import pytest
from study_helpers import assert_verdicts

from experiments.bowen_liu.fertility.claims import CLAIMS
from experiments.bowen_liu.fertility.data import load_fertility, split
from experiments.bowen_liu.fertility.study import (
    SHAPE,
    average_tvd,
    summary_statistics,
    table_counts,
)
from experiments.bowen_liu.fertility.tables import table_4, table_5
from harness import config
from harness.engine.aggregate import read_replicate_metrics, read_rows
from harness.engine.grid import plan_tasks
from harness.engine.study import load_study
from harness.engine.sweep import code_version
from harness.errors import ConfigError

#: At profile=ci the MODIPS − LAP rate difference (-0.049 ± 0.048, C4) and the LAP − MODIPS
#: TVD differences of orders 1-3 (z -0.9, -1.2, -1.5, C6) lie within 2 MCSE of 0: UNDECIDED.
MAY_BE_UNDECIDED_AT_CI = ("C4", "C6")


@pytest.fixture(scope="module")
def study():
    cfg = config.load(["study=bowen_liu_fertility", "profile=ci"])
    return cfg, load_study(cfg["study"])


@pytest.fixture(scope="module")
def ci_run(ci_sweep_of):
    cfg, _, metrics = ci_sweep_of("bowen_liu_fertility")
    return cfg, metrics, read_replicate_metrics(cfg)


def test_codec_round_trip_and_bins(study):
    _, st = study
    train, _ = st.split_of(2020)
    codec = st.codec(2020)
    # Scott 2-D over [0, 1]²: h = 3.5 · SD · 80^(-1/4)
    sd = train.features[:, [1, 8]].std(axis=0, ddof=1)
    assert codec.bins == tuple(int(np.ceil(1 / (3.5 * s * 80 ** -0.25))) for s in sd)
    assert codec.n_cells == 2880 * codec.n_bins
    data = st.generate({"split_seed": 2020}, np.random.default_rng(0), 3)
    assert data.values.shape == (3, 80, 10)
    back = codec.decode(data.cells, np.random.default_rng(1))
    assert np.array_equal(codec.cells(back), data.cells)  # same cell, new point in the bin
    # categorical columns are reproduced exactly
    cat = [0, 2, 3, 4, 5, 6, 7, 9]
    assert np.allclose(back[..., cat], data.values[..., cat])


def test_tvd_against_a_hand_computation():
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(int(np.prod(SHAPE)))).reshape(SHAPE)
    q = rng.dirichlet(np.ones(int(np.prod(SHAPE)))).reshape(SHAPE)
    # 1-way by hand: mean over the 8 variables of Σ_levels |p_v − q_v|
    hand1 = np.mean([np.abs(p.sum(axis=tuple(j for j in range(8) if j != v))
                            - q.sum(axis=tuple(j for j in range(8) if j != v))).sum()
                     for v in range(8)])
    assert average_tvd(p, q, 1) == pytest.approx(hand1)
    # 2-way: 28 tables
    pairs = list(itertools.combinations(range(8), 2))
    assert len(pairs) == 28
    hand2 = np.mean([np.abs(p.sum(axis=tuple(j for j in range(8) if j not in c))
                            - q.sum(axis=tuple(j for j in range(8) if j not in c))).sum()
                     for c in pairs])
    assert average_tvd(p, q, 2) == pytest.approx(hand2)
    assert average_tvd(p, q, 8) == pytest.approx(np.abs(p - q).sum())  # t = 1, no ½ factor
    assert average_tvd(p, p, 3) == 0.0


def test_tvd_of_two_small_data_sets_by_hand():
    """Two records vs two records that differ in the season of one record: every table that
    contains season has ‖p* − p‖₁ = 2 · ½ = 1, the others 0."""
    ref = load_fertility().subset(np.array([0, 2]))  # seasons -0.33, -0.33; both N
    values = np.concatenate([ref.features, ref.altered[:, None]], axis=1)
    synth = values.copy()
    synth[1, 0] = 1.0  # spring -> fall
    stats = summary_statistics(synth[None, None], ref)
    assert stats["tvd_1"][0] == pytest.approx(1 / 8)  # 1 of 8 one-way tables
    assert stats["tvd_2"][0] == pytest.approx(7 / 28)  # 7 of 28 pairs contain season
    assert stats["tvd_3"][0] == pytest.approx(21 / 56)  # C(7, 2) of 56 triples
    assert stats["tvd_8"][0] == pytest.approx(1.0)
    assert table_counts(values[None]).sum() == 2


def test_svm_on_the_original_training_data(study):
    """Table 4, 'Original data': the SVM trained on the 80 training records predicts every test
    case normal, 17/20 = 85% (0 of the 3 altered found)."""
    cfg, st = study
    tasks = plan_tasks(st, cfg, code_version(cfg["study"]["module"]))
    task = next(t for t in tasks if t.method == "Ori")
    from harness.engine.task import run_task

    res = run_task(st, dataclasses.replace(task, n_replicates=2), cfg)
    m = res.metrics.groupby("metric")["value"].mean()
    print(f"\nOri: TP {m.tp} FN {m.fn} FP {m.fp} TN {m.tn} CR {m.consistency_rate} "
          f"(paper 0, 3, 0, 17, 0.85); 5-fold CV accuracy {m.cv_accuracy:.3f}")
    assert (m.tp, m.fn, m.fp, m.tn) == (0, 3, 0, 17)
    assert m.consistency_rate == pytest.approx(0.85)
    assert res.rows.empty  # no interval estimands: only metric rows
    assert set(res.metrics["replicate"]) == {0, 1}


@pytest.mark.parametrize("label, delta", [("LAP", None), ("MODIPS", None),
                                          ("PrivateSVM", 1.35)])
def test_ledger_totals_equal_the_claimed_epsilon(study, label, delta):
    _, st = study
    synth = st.method(label, {"split_seed": 2020})
    data = st.generate({"split_seed": 2020}, np.random.default_rng(0), 12)
    rel = synth.release(data, np.e, np.random.default_rng(1))
    assert rel.ledger.total_epsilon() == pytest.approx(np.e, rel=1e-12)
    assert len(rel.ledger) == 1  # one vector query (all cells, or the 9 weights)
    entry = rel.ledger.entries[0]
    if delta is not None:
        assert entry.sensitivity == pytest.approx(delta)
        assert entry.scale == pytest.approx(1.35 / np.e)
    else:
        assert entry.sensitivity == 1.0  # the paper's Δ, from the config
        assert rel.sets.values.shape == (12, 1, 80, 10)


def test_nonempty_variant_is_flagged_not_dp_in_its_ledger(study):
    _, st = study
    data = st.generate({"split_seed": 2020}, np.random.default_rng(0), 2)
    rel = st.method("LAP-nonempty", {"split_seed": 2020}).release(data, np.e,
                                                                 np.random.default_rng(1))
    assert rel.ledger.entries[0].note.startswith("NOT DP")
    # only the training table's non-empty cells can appear in the release
    assert np.isin(rel.sets.cells, data.cells[0]).all()
    full = st.method("LAP", {"split_seed": 2020}).release(data, np.e, np.random.default_rng(1))
    assert full.ledger.entries[0].note == ""


def test_private_svm_kappa_option():
    cfg = config.load(["study=bowen_liu_fertility", "profile=ci",
                       "study.roster.PrivateSVM.kernel_bound=3"])
    st = load_study(cfg["study"])
    data = st.generate({"split_seed": 2020}, np.random.default_rng(0), 2)
    rel = st.method("PrivateSVM", {"split_seed": 2020}).release(data, np.e,
                                                               np.random.default_rng(1))
    assert rel.ledger.entries[0].sensitivity == pytest.approx(0.45)


def test_missing_sklearn_is_a_one_line_error(monkeypatch):
    real = builtins.__import__

    def no_sklearn(name, *args, **kwargs):
        if name == "sklearn" or name.startswith("sklearn."):
            raise ImportError("No module named 'sklearn'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sklearn)
    with pytest.raises(ConfigError, match=r'pip install -e "\.\[sklearn\]"') as info:
        config.load(["study=bowen_liu_fertility", "profile=ci"])
    assert "\n" not in str(info.value)


def test_bad_study_settings_are_one_line_errors():
    with pytest.raises(ConfigError, match="study.histogram_bounds: 'box' is not allowed"):
        config.load(["study=bowen_liu_fertility", "study.histogram_bounds=box"])
    with pytest.raises(ConfigError, match="noise_scope: 'some' is not allowed"):
        config.load(["study=bowen_liu_fertility", "study.roster.LAP.noise_scope=some"])
    with pytest.raises(ConfigError, match="study.tvd_reference"):
        config.load(["study=bowen_liu_fertility", "study.tvd_reference=test"])


def test_test_set_is_the_same_for_every_method(study):
    _, st = study
    d = load_fertility()
    _, test_idx = split(d, n_test=20, n_test_altered=3, seed=2020)
    _, test = st.split_of(2020)
    assert np.array_equal(test.features, d.features[test_idx])
    assert int(test.altered.sum()) == 3


def test_claims_at_ci_match_paper_profile_verdicts(ci_run):
    cfg, metrics, mrows = ci_run
    print(table_4(mrows).to_string(index=False))
    print(table_5(mrows).to_string(index=False))
    assert_verdicts(CLAIMS, metrics, "bowen_liu_fertility", MAY_BE_UNDECIDED_AT_CI)


def test_metric_rows_tables_and_aggregate(ci_run):
    cfg, metrics, mrows = ci_run
    assert read_rows(cfg).empty  # no interval estimands
    assert {"study", "scenario", "split_seed", "method", "epsilon", "replicate", "metric",
            "value"} <= set(mrows.columns)
    n = cfg["n_replicates"]
    counts = mrows.groupby(["method", "metric"]).size()
    assert (counts == n).all()
    cr = metrics[(metrics["metric"] == "consistency_rate")].set_index("method")
    assert cr.loc["Ori", "value"] == pytest.approx(0.85)
    assert cr.loc["LAP", "n_rep"] == n
    sd = metrics[metrics["metric"] == "age_mean_sd"]
    assert (sd["value"] >= 0).all() and len(sd) == 5  # Ori, LAP, MODIPS and two diagnostics
    t4 = table_4(mrows)
    assert list(t4["method"])[:4] == ["Ori", "PrivateSVM", "LAP", "MODIPS"]
    assert t4["method"].str.contains("non-DP diagnostic").sum() == 2
    assert np.allclose(t4[["tp", "fn"]].sum(axis=1), 3)
    assert np.allclose(t4[["fp", "tn"]].sum(axis=1), 17)
    t5 = table_5(mrows)
    assert isinstance(t5, pd.DataFrame) and set(t5["statistic"]) >= {"tvd_1", "tvd_8"}
    # the DP-correct LAP release is near-uniform over the table (spec §6 item 24 REVIEW b)
    lap = t5[(t5["method"] == "LAP") & (t5["statistic"] == "age_mean")]["ours"].iloc[0]
    assert abs(lap - 0.5) < 0.03
