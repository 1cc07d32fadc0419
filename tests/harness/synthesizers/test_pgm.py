"""MST and AIM (harness/synthesizers/pgm.py): release shapes and domains, the zCDP ledger
(total = claimed ε at δ, ρ per mechanism, σ and score sensitivity under both relations),
bit-identical re-runs, the two m modes and nested m, recovery of the data's two-way tables
at large ε, notebook use and bad settings. The reference comparison with OpenDP is in
test_pgm_reference.py, the privacy audit in tests/harness/privacy/test_pgm_audit.py."""

import math
from itertools import combinations

import numpy as np
import pytest

from harness.data import RecordBatch
from harness.errors import ConfigError
from harness.privacy import zcdp_epsilon, zcdp_rho
from harness.schema import Categorical, Schema
from harness.synthesizers import make_synthesizer

pytest.importorskip("mbi")

CARDS = (3, 2, 4)


def coded(reps=3, n=300, seed=0) -> RecordBatch:
    """Dependent columns: c1 follows c0, c2 follows c1."""
    rng = np.random.default_rng(seed)
    c0 = rng.integers(0, 3, (reps, n))
    c1 = np.where(rng.random((reps, n)) < 0.8, c0 % 2, rng.integers(0, 2, (reps, n)))
    c2 = np.where(rng.random((reps, n)) < 0.7, 2 * c1 + 1, rng.integers(0, 4, (reps, n)))
    schema = Schema(tuple(Categorical(f"c{j}", tuple(range(k))) for j, k in enumerate(CARDS)))
    return RecordBatch(np.stack([c0, c1, c2], axis=-1).astype(float), columns=schema.names,
                       schema=schema)


def two_way_tvd(sets, data) -> float:
    """Largest TVD over the replicates and pairs between a released set and its data."""
    worst = 0.0
    for a, b in combinations(range(len(CARDS)), 2):
        width = CARDS[a] * CARDS[b]
        for r in range(data.values.shape[0]):
            x = np.bincount((data.values[r, :, a] * CARDS[b] + data.values[r, :, b]).astype(
                int), minlength=width)
            y = np.bincount((sets[r, :, a] * CARDS[b] + sets[r, :, b]).astype(int),
                            minlength=width)
            worst = max(worst, 0.5 * np.abs(x / x.sum() - y / y.sum()).sum())
    return worst


@pytest.mark.parametrize("name", ["mst", "aim"])
def test_release_shapes_ledger_and_reproducibility(name):
    data = coded(reps=2)  # the replicate count of the other releases: one JIT compile for all
    synth = make_synthesizer(name, m=2, **({"rounds": 6} if name == "aim" else {}))
    rel = synth.release(data, 1.0, np.random.default_rng(1))
    again = synth.release(data, 1.0, np.random.default_rng(1))
    other = synth.release(data, 1.0, np.random.default_rng(2))
    v = rel.sets.values
    assert v.shape == (2, 2, 300, 3) and rel.sets.schema is data.schema
    assert np.all((v >= 0) & (v < np.array(CARDS))) and np.all(v == np.round(v))
    assert np.array_equal(v, again.sets.values)  # bit-identical from the same stream
    assert not np.array_equal(v, other.sets.values)
    led = rel.ledger
    assert led.zcdp_delta == 1e-5 and led.relations() == ("add/remove",)
    assert led.total_epsilon() == pytest.approx(1.0, rel=1e-9) and rel.epsilon == 1.0
    assert led.total_rho() == pytest.approx(zcdp_rho(1.0, 1e-5), rel=1e-12)
    assert led.total_delta() == 1e-5
    assert all(e.rho > 0 and e.epsilon == 0 for e in led.entries)
    # nested m: the first set spends ρ/2
    first = rel.first_sets(1)
    assert first.ledger.total_rho() == pytest.approx(led.total_rho() / 2, rel=1e-12)
    assert first.epsilon == pytest.approx(zcdp_epsilon(led.total_rho() / 2, 1e-5))


def test_mst_ledger_follows_the_paper_split_and_relation():
    """ρ/3 on the d one-way marginals, ρ/3 on d − 1 selections (score sensitivity Δ₁), ρ/3 on
    d − 1 pairs; substitution: Δ₂ = √2 (σ × √2) and Δ₁ = 2."""
    data = coded(reps=2)
    rho = zcdp_rho(2.0, 1e-5)
    for relation, l2, l1 in (("add/remove", 1.0, 1.0), ("substitution", math.sqrt(2), 2.0)):
        rel = make_synthesizer("mst", relation=relation).release(data, 2.0,
                                                                 np.random.default_rng(3))
        entries = rel.ledger.entries
        assert [e.mechanism for e in entries] == ["gaussian_zcdp"] * 3 + [
            "exponential_zcdp"] * 2 + ["gaussian_zcdp"] * 2
        assert {e.relation for e in entries} == {relation}
        for e in entries[:3]:
            assert e.rho == pytest.approx(rho / 9) and e.sensitivity == pytest.approx(l2)
            assert e.scale == pytest.approx(l2 / math.sqrt(2 * rho / 9))
        for e in entries[3:5]:
            assert e.rho == pytest.approx(rho / 6) and e.sensitivity == l1
        for e in entries[5:]:
            assert e.rho == pytest.approx(rho / 6) and e.scale == pytest.approx(
                l2 / math.sqrt(rho / 3))
        assert rel.epsilon == 2.0


@pytest.mark.parametrize("name", ["mst", "aim"])
def test_large_epsilon_recovers_the_two_way_tables(name):
    """At ε = 200 the noise is negligible: MST's tree (the chain c0–c1–c2) and AIM's model
    reproduce every two-way table up to the sampling error of 2 000 records."""
    data = coded(reps=2, n=2000)
    synth = make_synthesizer(name, **({"rounds": 8} if name == "aim" else {}))
    rel = synth.release(data, 200.0, np.random.default_rng(4))
    assert two_way_tvd(rel.sets.values[:, 0], data) < 0.06


def test_draws_mode_spends_rho_once():
    data = coded(reps=2)
    rel = make_synthesizer("mst", m=3, m_mode="draws").release(data, 1.0,
                                                               np.random.default_rng(5))
    assert rel.sets.values.shape == (2, 3, 300, 3)
    assert all(e.set_index is None for e in rel.ledger.entries)
    assert rel.first_sets(1).epsilon == pytest.approx(1.0, rel=1e-9)
    assert not np.array_equal(rel.sets.values[:, 0], rel.sets.values[:, 1])


def test_synthesize_on_a_dataframe():
    import pandas as pd

    frame = pd.DataFrame({"a": ["x", "y", "y", "x"] * 25, "b": ["u", "u", "v", "w"] * 25})
    sets = make_synthesizer("mst", m=2).synthesize(frame, 1.0, seed=3,
                                                   levels={"b": ["u", "v", "w"]})
    assert len(sets) == 2 and all(s.shape == (100, 2) for s in sets)
    assert set(sets[0]["b"]) <= {"u", "v", "w"}


def test_bad_settings_are_one_line_errors():
    for name, kwargs, key in (("mst", {"relation": "neighbours"}, "relation"),
                              ("mst", {"m_mode": "pooled"}, "m_mode"),
                              ("mst", {"delta": 0.0}, "delta"),
                              ("mst", {"oneway_split": 1.0}, "oneway_split"),
                              ("aim", {"degree": 0}, "degree"),
                              ("aim", {"max_iters": 10}, "max_iters")):
        with pytest.raises(ConfigError, match=key):
            make_synthesizer(name, **kwargs)


def test_study_relation_and_delta_calibrate_mst_natively():
    """``study.relation``/``study.delta`` (Synthesizer.calibrate) set MST's own relation and δ:
    substitution is native (Δ₂ = √2 per marginal), never group privacy, and the release's
    ledger converts at the study's δ."""
    synth = make_synthesizer("mst").calibrate("substitution", "MST", delta=1e-6)
    assert synth.relation == "substitution" and synth.delta == 1e-6
    assert not synth.by_group_privacy
    rel = synth.release(coded(reps=2), 1.0, np.random.default_rng(1))
    gauss = [e for e in rel.ledger.entries if e.mechanism == "gaussian_zcdp"]
    assert gauss and {e.relation for e in rel.ledger.entries} == {"substitution"}
    assert all(e.sensitivity == pytest.approx(math.sqrt(2)) for e in gauss)
    assert rel.ledger.zcdp_delta == 1e-6 and rel.epsilon == 1.0


def test_aim_in_opendps_budget_layout():
    """``oneway_split`` and ``final_round="clip"`` (OpenDP's contingency table, used by the
    reference test): the one-way marginals spend sρ (sρ/d each) before the rounds, the
    first round (1 − s)ρ/T, and the rounds end when exactly ρ is spent; a bad
    ``final_round`` is a one-line error naming it."""
    from harness.privacy import PrivacyLedger
    from harness.synthesizers import pgm

    data = coded(reps=1)
    codes = data.values.astype(np.int64)
    rho, d, t = 0.05, len(CARDS), 3
    ledger = PrivacyLedger(zcdp_delta=1e-5)
    _, rounds = pgm.aim_one(codes, CARDS, rho, "add/remove", np.random.default_rng(4), ledger,
                            rounds=t, oneway_split=0.5, final_round="clip")
    gauss = [e for e in ledger.entries if e.mechanism == "gaussian_zcdp"]
    assert [e.rho for e in gauss[:d]] == pytest.approx([0.5 * rho / d] * d)
    assert gauss[d].rho == pytest.approx(0.9 * 0.5 * rho / t)
    assert ledger.total_rho() == pytest.approx(rho, rel=1e-12) and rounds == len(gauss) - d
    with pytest.raises(ConfigError, match="final_round"):
        pgm.aim_one(codes, CARDS, rho, "add/remove", np.random.default_rng(4), ledger,
                    final_round="last")
    # the paper's layout (Alg. 2): σ₀ = √(T/(2αρ)) per one-way marginal, ρ = αρ/T each
    # (the reference code's sigma = sqrt(rounds / (2 * 0.9 * rho))), inside the rounds' budget
    paper = PrivacyLedger(zcdp_delta=1e-5)
    pgm.aim_one(codes, CARDS, rho, "add/remove", np.random.default_rng(4), paper, rounds=t)
    oneway = [e for e in paper.entries if e.mechanism == "gaussian_zcdp"][:d]
    assert [e.rho for e in oneway] == pytest.approx([0.9 * rho / t] * d)
    assert paper.total_rho() == pytest.approx(rho, rel=1e-12)
