"""PrivBayes (Zhang et al. 2017; spec 003 §3.2): the ledger of both phases in ``correct`` mode,
the flag of ``paper`` mode, empirical audits of the network choice and the noisy conditionals on
neighbouring data sets, recovery of a known Bayesian network with noise off (ε huge), the
record-level loop oracle of the vectorised counts, the MI score's sensitivity, and bad
configuration as one line."""

import itertools
import math

import numpy as np
import pytest

from harness.data import RecordBatch
from harness.errors import ConfigError
from harness.privacy import PrivacyLedger, audit_mechanism
from harness.privacy.ledger import SUBSTITUTION
from harness.schema import Categorical, Schema
from harness.synthesizers import make_synthesizer
from harness.synthesizers import privbayes as P
from harness.synthesizers.feature_hash import mutual_information as pairwise_mi

#: the known network: a → b, (a, b) → c, (b, c) → d (every later attribute has k = 2 parents,
#: as PrivBayes's networks do; d binary, so the binary sensitivity is used for its candidates)
CARDS = (3, 3, 4, 2)
TRUE_PARENTS = {0: (), 1: (0,), 2: (0, 1), 3: (1, 2)}
SCHEMA = Schema(tuple(Categorical(name, tuple(range(c)))
                      for name, c in zip("abcd", CARDS, strict=True)))


def known_network(r, n, seed):
    """Codes (R, n, 4) from the known network (strong dependence on every parent)."""
    g = np.random.default_rng(seed)
    a = g.choice(3, size=(r, n), p=[0.5, 0.3, 0.2])
    b = np.where(g.random((r, n)) < 0.8, a, g.integers(0, 3, (r, n)))
    c = np.where(g.random((r, n)) < 0.85, (a + 2 * b) % 4, g.integers(0, 4, (r, n)))
    d = (g.random((r, n)) < np.where((c >= 2) ^ (b == 0), 0.9, 0.1)).astype(int)
    return np.stack([a, b, c, d], axis=-1)


def batch(codes, schema=SCHEMA):
    return RecordBatch(np.asarray(codes, dtype=float), None, 1, schema.names, schema=schema)


def test_ledger_correct_mode_spends_exactly_what_each_phase_claims():
    data = batch(known_network(2, 300, 0))
    eps, m, beta = 1.2, 2, 0.3
    rel = make_synthesizer("privbayes", k=2, beta=beta, m=m).release(data, eps,
                                                                    np.random.default_rng(1))
    led = rel.ledger
    assert led.relations() == (SUBSTITUTION,) and not led.understated
    for j in range(m):
        mine = [e for e in led.entries if e.set_index == j]
        network = [e for e in mine if e.mechanism == "exponential"]
        tables = [e for e in mine if e.mechanism == "laplace"]
        assert len(network) == 3 and len(tables) == 2 and len(mine) == 5  # d − 1 and d − k
        assert all(e.epsilon == pytest.approx(beta * eps / m / 3, rel=1e-12) for e in network)
        assert all(e.epsilon == pytest.approx((1 - beta) * eps / m / 2, rel=1e-12)
                   for e in tables)
        # Laplace scale 2(d − k)/ε₂ on counts (sensitivity 2 under substitution)
        assert all(e.sensitivity == 2.0 and e.scale == pytest.approx(2 * 2 / ((1 - beta) * eps / m))
                   for e in tables)
    assert led.total_epsilon() == pytest.approx(eps, rel=1e-12)
    assert led.actual_total_epsilon() == pytest.approx(eps, rel=1e-12)
    assert rel.epsilon == eps
    assert np.all(rel.diagnostics["privbayes_claim_understated"] == 0)
    # degree 0: no network to learn, the whole set budget on the d marginals
    rel0 = make_synthesizer("privbayes", k=0, m=1).release(data, 0.8, np.random.default_rng(1))
    assert [e.mechanism for e in rel0.ledger.entries] == ["laplace"] * 4
    assert rel0.ledger.total_epsilon() == pytest.approx(0.8, rel=1e-12)
    # k ≥ d − 1: one table (the full joint), still d − 1 network steps
    rel9 = make_synthesizer("privbayes", k=9, m=1).release(data, 0.8, np.random.default_rng(1))
    assert [e.mechanism for e in rel9.ledger.entries].count("laplace") == 1
    assert rel9.ledger.total_epsilon() == pytest.approx(0.8, rel=1e-12)


def test_paper_mode_is_flagged_as_claiming_less_than_it_spends():
    n, eps, m = 400, 1.0, 2
    data = batch(known_network(2, n, 0))
    rel = make_synthesizer("privbayes", k=2, mode="paper", m=m).release(
        data, eps, np.random.default_rng(1))
    led = rel.ledger
    eps2 = 0.5 * eps / m
    tables = [e for e in led.entries if e.mechanism == "laplace_MISSCALED"]
    assert len(tables) == 2 * m and all("MISSCALED" in e.note for e in tables)
    for e in tables:  # the 2019 code: scale 2(d − k)/(n·ε₂) on counts, claimed ε₂/(d − k)
        assert e.scale == pytest.approx(2 * 2 / (n * eps2))
        assert e.epsilon == pytest.approx(eps2 / 2) and e.actual_epsilon == pytest.approx(
            n * eps2 / 2)
    assert led.total_epsilon() == pytest.approx(eps)  # what it claims
    actual = m * (0.5 * eps / m + n * eps2)           # what it spends
    print(f"paper mode: claims ε = {led.total_epsilon():g}, spends {led.actual_total_epsilon():g}")
    assert led.understated and led.actual_total_epsilon() == pytest.approx(actual)
    assert np.all(rel.diagnostics["privbayes_claim_understated"] == 1)
    assert np.allclose(rel.diagnostics["privbayes_actual_epsilon"].sum(axis=1), actual)


def _replicated(codes, size):
    return np.broadcast_to(codes, (size, *codes.shape)).copy()


#: neighbouring data sets for the audits (substitution: record 0 changed), 3 attributes
SMALL = Schema(tuple(Categorical(x, (0, 1)) for x in "xyz"))
X = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 0], [1, 1, 1], [0, 0, 1], [1, 1, 1]])
X_PRIME = X.copy()
X_PRIME[0] = [1, 0, 1]


def test_audit_network_choice_correct_mode():
    eps1 = 2.0
    cards = np.array([2, 2, 2])

    def sample(codes, rng, size):
        scores = P.candidate_scores(_replicated(codes, 1), cards, 1)
        scores = {s: P.Candidates(c.children, c.parents, np.repeat(c.mi, size, axis=0),
                                  c.sensitivity) for s, c in scores.items()}
        net = P.learn_network(scores, cards, 1, eps1, rng, PrivacyLedger(relation=SUBSTITUTION))
        parent = np.where(net.parents[:, :, 0] >= 0, net.parents[:, :, 0] + 1, 0)
        code = net.order[:, 0] * 1000  # root, then each position's (child, parent)
        for i in range(1, 3):
            code = code + (net.order[:, i] * 4 + parent[:, i]) * 10 ** (i - 1) * 10
        return code.astype(float)

    res = audit_mechanism(sample, X, X_PRIME, claimed_epsilon=eps1, n_samples=40_000,
                          rng=np.random.default_rng(5))
    print(res.summary())
    assert res.passed


def test_audit_noisy_conditionals_correct_mode_and_paper_mode_fails():
    eps2 = 1.0
    cards = np.array([2, 2, 2])
    rng0 = np.random.default_rng(0)

    def sampler(mode):
        def sample(codes, rng, size):
            net = P.Network(np.tile([0, 1, 2], (size, 1)),
                            np.tile(np.array([[-1], [0], [1]]), (size, 1, 1)))  # public
            tables = P.noisy_tables(_replicated(codes, size), cards, net, 1, eps2, mode, rng,
                                    PrivacyLedger(relation=SUBSTITUTION))
            return np.concatenate(tables, axis=1)
        return sample

    res = audit_mechanism(sampler("correct"), X, X_PRIME, claimed_epsilon=eps2,
                          n_samples=40_000, rng=rng0)
    print(res.summary())
    assert res.passed
    # negative control: the 2019 scale is far below what ε₂ needs, and the audit sees it
    bad = audit_mechanism(sampler("paper"), X, X_PRIME, claimed_epsilon=eps2, n_samples=2_000,
                          rng=rng0)
    print(bad.summary())
    assert not bad.passed  # (n = 6: it really spends n·ε₂ = 6 over the two tables)


def test_mi_sensitivity_bounds_every_substitution_on_small_data():
    """|I(D) − I(D')| ≤ S(I) for every one-record change of random small data sets (n = 7):
    the lemma's binary form for a binary child, the general form for 3 × 3 tables."""
    g = np.random.default_rng(3)
    n = 7
    for cards, binary in (((2, 3), True), ((3, 3), False)):
        worst = 0.0
        for _ in range(300):
            codes = np.column_stack([g.integers(0, c, n) for c in cards])
            base = pairwise_mi(codes, cards)[0, 1]
            for i, x0, x1 in itertools.product(range(n), range(cards[0]), range(cards[1])):
                other = codes.copy()
                other[i] = [x0, x1]
                worst = max(worst, abs(pairwise_mi(other, cards)[0, 1] - base))
        bound = P.mi_sensitivity(n, binary)
        print(f"cards {cards}: largest |ΔI| = {worst:.4f}, S(I) = {bound:.4f}")
        assert worst <= bound + 1e-12 and worst > 0.5 * bound


def test_table_counts_and_mi_match_a_record_loop():
    codes = known_network(3, 120, 7)
    cards = np.array(CARDS)
    cols = np.array([[0, 2, 3], [3, 1, 2], [2, 0, 1]])  # a different column set per replicate
    counts, sizes = P.table_counts(codes, cols, cards)
    for r in range(3):
        radix = cards[cols[r]]
        loop = np.zeros(counts.shape[1])
        for rec in codes[r]:
            cell = 0
            for col, rad in zip(cols[r], radix, strict=True):
                cell = cell * rad + rec[col]
            loop[cell] += 1
        assert sizes[r] == np.prod(radix) and np.array_equal(counts[r], loop)
    scores = P.candidate_scores(codes, cards, 2)
    one = scores[1]
    for r in range(3):
        mi = pairwise_mi(codes[r], CARDS)  # the feature-hash module's independent pairwise MI
        for i, (child, (parent,)) in enumerate(zip(one.children, one.parents, strict=True)):
            assert one.mi[r, i] == pytest.approx(mi[child, parent], abs=1e-12)
    assert scores[2].mi.shape == (3, 4 * 3)  # 4 children × C(3, 2) parent pairs


def test_noise_off_recovers_the_known_network_and_its_marginals():
    r, n = 4, 4000
    codes = known_network(r, n, 11)
    cards = np.array(CARDS)
    huge = 1e7  # ε → ∞: the exponential mechanism is the argmax, the noise negligible
    scores = P.candidate_scores(codes, cards, 2)
    net = P.learn_network(scores, cards, 2, huge, np.random.default_rng(0),
                          PrivacyLedger(relation=SUBSTITUTION),
                          root=np.zeros(r, dtype=np.int64))
    for k in range(r):  # the same factorisation: one joint of the first k + 1 = 3 attributes
        # (their order within it is immaterial), then the true parents of every later one
        learned = net.parent_sets(k)
        print(learned)
        assert set(net.order[k, :3]) == {0, 1, 2}
        assert learned[3] == TRUE_PARENTS[3]
    ledger = PrivacyLedger(relation=SUBSTITUTION)
    tables = P.noisy_tables(codes, cards, net, 2, huge, "correct", np.random.default_rng(1),
                            ledger)
    synth = P.sample_records(tables, net, cards, 2, n, np.random.default_rng(2))
    assert synth.shape == codes.shape
    worst = 0.0
    for cols in ([0, 1, 2], [1, 2, 3]):  # the network's two tables
        c = np.tile(np.array(cols), (r, 1))
        orig = P.table_counts(codes, c, cards)[0] / n
        syn = P.table_counts(synth, c, cards)[0] / n
        se = np.sqrt(orig * (1 - orig) / n) + 1e-3
        worst = max(worst, float(np.max(np.abs(syn - orig) / se)))
    print(f"largest |synthetic − original| cell share in SE units: {worst:.2f}")
    assert worst < 5
    # the whole release at a huge ε with random roots: every pairwise marginal kept
    rel = make_synthesizer("privbayes", k=2, m=1).release(batch(codes), huge,
                                                         np.random.default_rng(3))
    out = rel.sets.values[:, 0].astype(np.int64)
    for a, b in itertools.combinations(range(4), 2):
        c = np.tile(np.array([a, b]), (r, 1))
        tvd = 0.5 * np.abs(P.table_counts(out, c, cards)[0]
                           - P.table_counts(codes, c, cards)[0]).sum(axis=1) / n
        assert tvd.max() < 0.03, (a, b, tvd)


def test_release_is_reproducible_and_sets_differ():
    data = batch(known_network(2, 200, 0))
    synth = make_synthesizer("privbayes", k=1, m=2)
    a = synth.release(data, 2.0, np.random.default_rng(4))
    b = synth.release(data, 2.0, np.random.default_rng(4))
    assert np.array_equal(a.sets.values, b.sets.values)
    assert not np.array_equal(a.sets.values[:, 0], a.sets.values[:, 1])
    assert set(np.unique(a.sets.values[..., 2])) <= set(range(4))
    # diagnostics: each attribute's network position (a permutation) and parent bit mask
    pos = np.stack([a.diagnostics[f"privbayes_position_{x}"] for x in "abcd"], axis=-1)
    mask = np.stack([a.diagnostics[f"privbayes_parents_{x}"] for x in "abcd"], axis=-1)
    assert pos.shape == (2, 2, 4) and np.all(np.sort(pos, axis=-1) == np.arange(4))
    assert np.all(np.where(pos == 0, mask, -1) <= 0)  # the root has no parents
    assert np.all(np.where(pos > 0, np.log2(np.maximum(mask, 1)) % 1, 0) == 0)  # k = 1: one
    assert np.all(np.where(pos > 0, mask, 1) > 0)


@pytest.mark.parametrize("params, key", [
    ({"mode": "ds2019"}, "mode"), ({"k": -1}, "k"), ({"k": 1.5}, "k"),
    ({"beta": 1.0}, "beta"), ({"beta": 0}, "beta"), ({"beta": 1.5}, "beta"),
])
def test_bad_config_is_one_line(params, key):
    with pytest.raises(ConfigError) as err:
        make_synthesizer("privbayes", key="study.roster.PrivBayes", **params)
    msg = str(err.value)
    print(msg)
    assert "\n" not in msg and msg.startswith(f"study.roster.PrivBayes.{key}:")
    if key == "mode":
        assert "correct" in msg and "paper" in msg


def test_bad_data_is_one_line():
    synth = make_synthesizer("privbayes")
    numeric = RecordBatch(np.zeros((1, 5, 2)))
    with pytest.raises(ConfigError, match=r"^data: privbayes needs .*categorical"):
        synth.release(numeric, 1.0, np.random.default_rng(0))
    with pytest.raises(ConfigError, match=r"^data: privbayes needs at least 2 records"):
        synth.release(batch(np.zeros((1, 1, 4))), 1.0, np.random.default_rng(0))
    assert math.isfinite(P.mi_sensitivity(2, True))


def test_notebook_use_on_a_frame_of_labels():
    import pandas as pd

    codes = known_network(1, 150, 2)[0]
    frame = pd.DataFrame({name: np.array([f"{name}{v}" for v in codes[:, j]])
                          for j, name in enumerate("abcd")})
    levels = {name: [f"{name}{v}" for v in range(c)] for name, c in zip("abcd", CARDS,
                                                                          strict=True)}
    sets = make_synthesizer("privbayes", m=2).synthesize(frame, 5.0, seed=1, levels=levels)
    assert len(sets) == 2 and all(list(s.columns) == list("abcd") and len(s) == 150
                                  for s in sets)
    assert all(set(s[name]) <= set(levels[name]) for s in sets for name in "abcd")


def test_audit_whole_release_correct_mode():
    """End to end: a synthetic count (records with x = y = 0) of the released set, a function
    of the network and the noisy tables only, spends at most the claimed ε."""
    eps = 1.0
    synth = make_synthesizer("privbayes", k=1, m=1)

    def sample(codes, rng, size):
        rel = synth.release(batch(_replicated(codes, size), SMALL), eps, rng)
        out = rel.sets.values[:, 0]
        return ((out[..., 0] == 0) & (out[..., 1] == 0)).sum(axis=-1).astype(float)

    res = audit_mechanism(sample, X, X_PRIME, claimed_epsilon=eps, n_samples=20_000,
                          rng=np.random.default_rng(8))
    print(res.summary())
    assert res.passed


def test_first_network_step_follows_the_exponential_mechanism_law():
    """From a fixed root, the first pair is drawn with probability ∝ exp(ε₁/(d − 1)·I/(2S))
    (the paper's exp(I/(2Δ)), Δ = (d − 1)S/ε₁): chi-square of 20,000 draws against it."""
    from scipy import stats

    codes = known_network(1, 60, 4)
    cards = np.array(CARDS)
    eps1, size = 0.6, 20_000
    scores = P.candidate_scores(codes, cards, 2)
    one = scores[1]
    tiled = {s: P.Candidates(c.children, c.parents, np.repeat(c.mi, size, axis=0),
                             c.sensitivity) for s, c in scores.items()}
    net = P.learn_network(tiled, cards, 2, eps1, np.random.default_rng(6),
                          PrivacyLedger(relation=SUBSTITUTION),
                          root=np.zeros(size, dtype=np.int64))
    rows = np.flatnonzero(one.parents[:, 0] == 0)  # pairs (X, {a})
    logit = eps1 / 3 * one.mi[0, rows] / (2 * one.sensitivity[rows])
    expected = np.exp(logit - logit.max())
    expected = size * expected / expected.sum()
    observed = np.array([np.sum(net.order[:, 1] == one.children[i]) for i in rows])
    print("observed", observed, "expected", expected.round(1))
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    assert np.all(net.parents[:, 1, 0] == 0)
