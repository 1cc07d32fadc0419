"""PeGS and PeGS.rs (Park & Ghosh; spec 001 §1): feature hashing, Eq. 4, the corrected Eq. 6,
the vectorised sampler against a record-level loop oracle, unit tests 2–5 of spec §1.9, the
α(ε) table of spec §3, the ledger and bad configuration. Privacy by enumeration and the audit
are in tests/harness/privacy/test_pegs_privacy.py."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from harness.data import RecordBatch
from harness.errors import ConfigError
from harness.schema import Categorical, Schema
from harness.synthesizers import make_synthesizer, pegs
from harness.synthesizers.feature_hash import (
    build_hashes,
    count_tables,
    mi_orders,
    mixed_radix,
    mutual_information,
    splitmix64,
)

CARDS = (2, 3, 2)
M = len(CARDS)
SCHEMA = Schema(tuple(Categorical(f"x{i}", tuple(range(c))) for i, c in enumerate(CARDS)))
CELLS = np.array(list(itertools.product(*[range(c) for c in CARDS])))


def toy(n=30, seed=3, reps=1):
    rng = np.random.default_rng(seed)
    return np.stack([np.stack([rng.integers(0, c, n) for c in CARDS], -1) for _ in range(reps)])


def batch(codes, schema=SCHEMA):
    codes = np.asarray(codes)
    codes = codes[None] if codes.ndim == 2 else codes
    return RecordBatch(codes.astype(float), columns=schema.names, schema=schema)


def cell_index(records):
    return mixed_radix(np.asarray(records, dtype=np.int64), CARDS)


# --- a record-level loop oracle: plain Python, one chain at a time -----------------------------
MASK = (1 << 64) - 1


def py_splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def py_key(h, state):
    key = 0
    for k in h.head:
        key = key * CARDS[k] + int(state[k])
    if not h.tail or h.tail_hash == "none":
        return key
    code = 0
    for k in h.tail:
        code = code * CARDS[k] + int(state[k])
    return key * 2 + (py_splitmix64(code ^ h.salt) & 1)


class LoopOracle:
    """PeGS by the paper's description, record by record: a dictionary of counts per (table,
    key), Eq. 4, inversion of one uniform per lookup, a Python set of visited (table, key)."""

    def __init__(self, rows, hashes, alpha):
        self.hashes, self.alpha, self.counts = hashes, alpha, {}
        for row in rows:
            for i, h in enumerate(hashes):
                cell = self.counts.setdefault((i, py_key(h, row)), [0] * CARDS[i])
                cell[int(row[i])] += 1

    def chain(self, seed, uniforms, reset):
        state, out, visited = [int(v) for v in seed], [], set()
        for u in uniforms:  # one sweep per row of uniforms (M,)
            seen = []
            for i, c in enumerate(CARDS):
                key = py_key(self.hashes[i], state)
                if reset and (i, key) in visited:
                    p = [1.0 / c] * c
                else:
                    cnt = self.counts.get((i, key), [0] * c)
                    total = float(sum(cnt)) + sum([self.alpha] * c)
                    p = [(n + self.alpha) / total for n in cnt]
                cum, j = 0.0, c - 1
                for jj, pj in enumerate(p):
                    cum += pj
                    if u[i] < cum:
                        j = jj
                        break
                state[i] = j
                seen.append((i, key))
            visited.update(seen)
            out.append(list(state))
        return out


@pytest.mark.parametrize("name,kw", [
    ("pegs", {}),
    ("pegs", {"sweeps_per_sample": 3}),
    ("pegs", {"head_size": 1}),
    ("pegs_rs", {"B": 3, "n_out": 20}),
    ("pegs_rs", {"B": 4, "head_size": 0, "n_out": 30}),
])
def test_vectorised_release_equals_the_loop_oracle(name, kw):
    """Same rng stream → identical records: seeds (rows without replacement), then one
    ``random((M, chains))`` per sweep; the oracle replays the uniforms chain by chain."""
    codes = toy(reps=2)
    eps = 1.5
    synth = make_synthesizer(name, hash_seed=5, **kw)
    rel = synth.release(batch(codes), eps, np.random.default_rng(42))
    block = kw.get("B", 1)
    sweeps = kw.get("sweeps_per_sample", 1) * block
    n_out = kw.get("n_out", codes.shape[1])
    chains = -(-n_out // block)
    rng = np.random.default_rng(42)
    seeds = pegs.draw_seeds("original", codes, CARDS, chains, 0.0, rng)
    uniforms = [rng.random((M, 2 * chains)) for _ in range(sweeps)]
    hashes = build_hashes(CARDS, [(1, 2), (0, 2), (0, 1)], kw.get("head_size", 2),
                          "splitmix_parity", 5)
    alpha = pegs.alpha_for(eps, M, block)
    for r in range(2):
        oracle = LoopOracle(codes[r], hashes, alpha)
        expected = []
        for c in range(chains):
            us = [u[:, r * chains + c] for u in uniforms]
            out = oracle.chain(seeds[r, c], us, reset=block > 1)
            expected.extend(out if block > 1 else out[-1:])
        got = rel.sets.values[r, 0].astype(int)
        assert np.array_equal(got, np.array(expected[:n_out])), (name, kw, r)


def test_loop_oracle_and_sampler_agree_in_distribution():
    """A second, statistical comparison on fresh streams: record frequencies of 20 000 one-sweep
    samples from one seed, vectorised vs loop, by a chi-square test of homogeneity."""
    codes = toy()
    alpha = 1.0
    synth = make_synthesizer("pegs", head_size=1)
    model = synth.fit(batch(codes))
    probs = model.conditionals(alpha)
    k = 20_000
    seed = np.tile(codes[0, 0], (k, 1))
    vec, _ = model.run(seed, np.zeros(k, dtype=int), probs, 1, np.random.default_rng(1))
    oracle = LoopOracle(codes[0], model.hashes, alpha)
    u = np.random.default_rng(2).random((k, M))
    loop = np.array([oracle.chain(codes[0, 0], [u[c]], False)[0] for c in range(k)])
    table = np.stack([np.bincount(cell_index(x), minlength=12) for x in (vec[0], loop)])
    table = table[:, table.sum(0) > 0]
    assert stats.chi2_contingency(table)[1] > 1e-3


# --- hashing -----------------------------------------------------------------------------------


def test_splitmix64_matches_the_reference_sequence():
    # splitmix64 seeded with 0: the first two outputs of the reference generator
    out = splitmix64(np.array([0, 0x9E3779B97F4A7C15], dtype=np.uint64))
    assert [int(v) for v in out] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]
    assert py_splitmix64(0) == 0xE220A8397B1DCDAF


def test_keys_and_table_sizes():
    h = build_hashes(CARDS, [(1, 2), (0, 2), (0, 1)], 1, "splitmix_parity", 0)
    assert [x.n_keys for x in h] == [2 * 3, 2 * 2, 2 * 2]
    state = CELLS.copy()
    for x in h:
        keys = x.keys(state)
        assert keys.min() >= 0 and keys.max() < x.n_keys
        assert [py_key(x, s) for s in state] == keys.tolist()
        flipped = state.copy()
        flipped[:, x.target] = 0  # the target's own value never enters its key
        assert np.array_equal(x.keys(flipped), keys)
    no_tail = build_hashes(CARDS, [(1, 2), (0, 2), (0, 1)], 2, "splitmix_parity", 0)
    assert [x.n_keys for x in no_tail] == [6, 4, 6] and not any(x.uses_bit for x in no_tail)
    marginal = build_hashes(CARDS, [(1, 2), (0, 2), (0, 1)], 0, "none", 0)
    assert [x.n_keys for x in marginal] == [1, 1, 1]
    assert set(marginal[0].keys(state).tolist()) == {0}
    # the bit splits the tail configurations, and the salt decides how
    tail = build_hashes(CARDS, [(1, 2), (0, 2), (0, 1)], 0, "splitmix_parity", 0)
    assert len({tuple(x.keys(state)) for x in tail}) > 1
    proj = build_hashes(CARDS, [(1, 2), (0, 2), (0, 1)], 0, "random_projection", 0)
    assert set(np.unique(proj[0].keys(state)).tolist()) <= {0, 1}


def test_count_tables_count_rows_by_key_and_category():
    codes = toy(reps=2)
    h = build_hashes(CARDS, [(1, 2), (0, 2), (0, 1)], 1, "splitmix_parity", 3)
    tables = count_tables(h, codes, CARDS)
    for r in range(2):
        oracle = LoopOracle(codes[r], h, 1.0).counts
        for i, t in enumerate(tables):
            assert t.dtype == np.int64 and t.shape == (2, h[i].n_keys, CARDS[i])
            assert t[r].sum() == codes.shape[1]
            for key in range(h[i].n_keys):
                assert t[r, key].tolist() == oracle.get((i, key), [0] * CARDS[i])


def test_mutual_information_in_nats_and_order_ties_to_lower_index():
    x = np.array([[0, 0, 0, 1], [1, 1, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1]])
    mi = mutual_information(x, (2, 2, 2, 2))
    assert mi[0, 1] == pytest.approx(math.log(2)) and mi[0, 3] == pytest.approx(0.0)
    orders = mi_orders(x, (2, 2, 2, 2))
    assert orders[0] == (1, 2, 3) and orders[2] == (0, 1, 3) and orders[3] == (0, 1, 2)


# --- spec §1.9 unit tests 2–5 --------------------------------------------------------------------


def test_support_at_alpha_zero():
    """Unit test 2: α = 0, m = M − 1 and seeds from D keep every record in D's support; any
    α > 0 leaves it."""
    codes = toy(n=6, seed=1)
    support = set(cell_index(codes[0]).tolist())
    model = make_synthesizer("pegs", head_size=M - 1).fit(batch(codes))
    seeds = codes[0, np.random.default_rng(0).integers(0, 6, 5000)]
    rep = np.zeros(5000, dtype=int)
    out, _ = model.run(seeds, rep, model.conditionals(0.0), 3, np.random.default_rng(1))
    assert set(cell_index(out.reshape(-1, M)).tolist()) <= support
    out, _ = model.run(seeds, rep, model.conditionals(0.5), 1, np.random.default_rng(1))
    assert not set(cell_index(out[0]).tolist()) <= support


def test_high_noise_limit_is_uniform():
    """Unit test 3: as α → ∞ (ε → 0) the conditionals and the records become uniform."""
    codes = toy()
    synth = make_synthesizer("pegs", n_out=30_000)
    model = synth.fit(batch(codes))
    for p, c in zip(model.conditionals(pegs.alpha_for(1e-7, M)), CARDS, strict=True):
        assert np.abs(p - 1 / c).max() < 1e-6
    many = np.broadcast_to(codes, (1, 30, M))
    rel = synth.release(batch(many), 1e-7, np.random.default_rng(0))
    freq = np.bincount(cell_index(rel.sets.values[0, 0]), minlength=12)
    assert stats.chisquare(freq).pvalue > 1e-3
    low_noise = synth.release(batch(many), 50.0, np.random.default_rng(0))
    freq = np.bincount(cell_index(low_noise.sets.values[0, 0]), minlength=12)
    assert stats.chisquare(freq).pvalue < 1e-6  # the test has power


def test_marginal_sampler():
    """Unit test 4: m = 0 with tail_hash = "none" is the perturbed marginal sampler."""
    codes = toy(n=40, seed=7)
    eps = 3.0
    alpha = pegs.alpha_for(eps, M)
    synth = make_synthesizer("pegs", head_size=0, tail_hash="none", n_out=60_000, pool="uniform")
    model = synth.fit(batch(codes))
    rel = synth.release(batch(codes), eps, np.random.default_rng(3))
    out = rel.sets.values[0, 0].astype(int)
    expected = 1.0
    for i, (p, c) in enumerate(zip(model.conditionals(alpha), CARDS, strict=True)):
        counts = np.bincount(codes[0, :, i], minlength=c)
        marginal = (counts + alpha) / (40 + c * alpha)
        assert p.shape == (1, 1, c) and np.allclose(p[0, 0], marginal, rtol=1e-12)
        assert stats.chisquare(np.bincount(out[:, i], minlength=c), marginal * 60_000).pvalue \
            > 1e-3
        expected = np.multiply.outer(expected, marginal)
    # and the features are independent: the joint is the product of the marginals
    joint = np.bincount(cell_index(out), minlength=12)
    assert stats.chisquare(joint, expected.ravel() * 60_000).pvalue > 1e-3


def test_reset_gives_exactly_one_over_c():
    """Unit test 5: a key revisited within a block draws from exactly 1/C_i, whatever the
    counts; a key not in the chain's reset set draws from Eq. 4."""
    codes = np.zeros((1, 30, M), dtype=int)  # all mass on category 0
    model = make_synthesizer("pegs_rs", head_size=0, tail_hash="none").fit(batch(codes))
    probs = model.conditionals(0.1)
    c = CARDS[1]
    for j in range(c):
        for edge in (j / c, (j + 1) / c - 1e-12):
            state = np.zeros((1, M), dtype=int)
            model.step(1, state, np.zeros(1, dtype=int), probs, np.array([edge]),
                       reset_keys=np.array([[0]]))
            assert state[0, 1] == j
    state = np.zeros((1, M), dtype=int)
    model.step(1, state, np.zeros(1, dtype=int), probs, np.array([0.5]),
               reset_keys=np.array([[0]])[:, :0])
    assert state[0, 1] == 0  # unperturbed-ish mass on 0: P(0) = 30.1/30.3
    # in a block of B = 2 with one key per table, the second sample is uniform
    synth = make_synthesizer("pegs_rs", B=2, head_size=0, tail_hash="none", n_out=40_000)
    rel = synth.release(batch(np.broadcast_to(codes, (1, 30, M))), 5.0,
                        np.random.default_rng(0))
    second = rel.sets.values[0, 0, 1::2].astype(int)
    assert stats.chisquare(np.bincount(cell_index(second), minlength=12)).pvalue > 1e-3
    first = rel.sets.values[0, 0, 0::2].astype(int)
    assert np.mean(cell_index(first) == 0) > 0.5
    assert np.all(rel.diagnostics["reset_hits_per_chain"] == M)


# --- α(ε), trace, l-diversity, per-category α ------------------------------------------------


EPS_GRID = [0.1, 0.5, 1, 5, 10, 50, 100]
ALPHA_PEGS = [129.5, 25.50, 12.51, 2.132, 0.8635, 0.02183, 4.565e-4]
ALPHA_RS = [12.51, 2.132, 0.8635, 0.02183, 4.565e-4, 1.979e-17, 3.915e-34]


@pytest.mark.parametrize("eps,pegs_alpha,rs_alpha", list(zip(EPS_GRID, ALPHA_PEGS, ALPHA_RS,
                                                             strict=True)))
def test_alpha_table_of_spec_section_3(eps, pegs_alpha, rs_alpha):
    assert pegs.alpha_for(eps, 13) == pytest.approx(pegs_alpha, rel=6e-4)
    assert pegs.alpha_for(eps, 13, block=10) == pytest.approx(rs_alpha, rel=6e-4)
    assert pegs.epsilon_of(pegs.alpha_for(eps, 13), 13) == pytest.approx(eps, rel=1e-9)
    assert pegs.epsilon_of(pegs.alpha_for(eps, 13, 10), 13, 10) == pytest.approx(eps, rel=1e-9)
    # M = 1: McClure & Reiter's binary α = 1/(e^ε − 1)
    assert pegs.alpha_for(eps, 1) == pytest.approx(1 / math.expm1(eps), rel=1e-12)


def test_trace_records_one_sweep():
    codes = toy()
    model = make_synthesizer("pegs", head_size=1).fit(batch(codes))
    seed = codes[0, 4]
    rows = model.trace(seed, 1.0, np.random.default_rng(9))
    assert rows.shape == (M + 1, M) and np.array_equal(rows[0], seed)
    for i in range(M):
        changed = np.flatnonzero(rows[i + 1] != rows[i])
        assert set(changed.tolist()) <= {i}
    # the trace is the sampler's sweep on the same stream
    out, _ = model.run(seed[None], np.zeros(1, dtype=int), model.conditionals(
        pegs.alpha_for(1.0, M)), 1, np.random.default_rng(9))
    assert np.array_equal(out[0, 0], rows[-1])


def test_l_diversity_alpha():
    counts = np.array([[10.0, 0.0, 0.0], [3.0, 3.0, 3.0], [0.0, 0.0, 0.0], [5.0, 1.0, 0.0]])
    a = pegs.l_diversity_alpha(counts, 2.0)
    assert a[1] == 0.0 and a[2] == 0.0  # already diverse (uniform / empty)
    for row in (0, 3):
        p = pegs.perturbed_conditional(counts[row], a[row])
        assert -np.sum(p * np.log(p)) == pytest.approx(math.log(2.0), abs=1e-9)
    full = pegs.l_diversity_alpha(counts, 3.0)  # l = C: uniform unless exactly uniform already
    assert full[1] == 0.0 and np.isinf(full[0])
    assert np.allclose(pegs.perturbed_conditional(counts[0], full[0]), 1 / 3)
    model = make_synthesizer("pegs", l_diversity=2.0).fit(batch(toy()))
    alpha = 0.01
    for p, t in zip(model.conditionals(alpha, l_diversity=2.0), model.tables, strict=True):
        ent = -np.sum(p * np.log(p), axis=-1)
        assert np.all(ent >= math.log(2.0) - 1e-9)
        # never less perturbed than the ε-calibrated α: each row is Eq. 4 at some α' ≥ α
        floor = pegs.perturbed_conditional(t, alpha)
        assert np.all(p.max(-1) <= floor.max(-1) + 1e-12)


def test_marginal_alpha_is_calibrated_by_its_smallest_component():
    codes = toy(n=40)
    synth = make_synthesizer("pegs", marginal_alpha=True)
    alpha = pegs.alpha_for(2.0, M)
    cat = synth._category_alpha(codes, CARDS, alpha)
    for i, a in enumerate(cat):
        counts = np.bincount(codes[0, :, i], minlength=CARDS[i]) + 1.0
        assert a.min() == pytest.approx(alpha) and np.allclose(a[0], alpha * counts
                                                               / counts.min())


# --- structure, ledger, release shape ------------------------------------------------------------


def test_public_structure_orders_by_the_public_part():
    public = np.stack([toy(n=50, seed=0)[0][:, [0, 0, 2]]])  # x1 duplicates x0 (in codes 0..1)
    synth = make_synthesizer("pegs", structure="public", head_size=1)
    assert synth.needs_parts == ("public",)
    data = batch(toy())
    model = synth.fit(data, parts={"public": batch(public)})
    assert model.hashes[0].head == (1,) and model.hashes[1].head == (0,)
    with pytest.raises(ConfigError, match="parts"):
        synth.release(data, 1.0, np.random.default_rng(0))
    rel = synth.release(data, 1.0, np.random.default_rng(0), parts={"public": batch(public)})
    assert rel.sets.values.shape == (1, 1, 30, M)


def test_given_orders_by_name_and_default_index_order():
    synth = make_synthesizer("pegs", orders={"x0": ["x2"]}, head_size=1)
    model = synth.fit(batch(toy()))
    assert [h.head for h in model.hashes] == [(2,), (0,), (0,)]
    assert model.hashes[0].tail == (1,)


@pytest.mark.parametrize("name,kw,per_set", [
    ("pegs", {"m": 3}, 30 * 0.7),
    ("pegs", {"n_out": 10, "sweeps_per_sample": 2}, 10 * 2 * 0.7),
    ("pegs_rs", {"B": 4, "n_out": 10, "m": 2}, 3 * 4 * 0.7),  # ⌈10/4⌉ blocks of 4·ε′
    ("pegs_rs", {"B": 5}, 6 * 5 * 0.7),
])
def test_ledger_total_equals_the_claimed_epsilon(name, kw, per_set):
    synth = make_synthesizer(name, **kw)
    data = batch(toy(reps=2))
    rel = synth.release(data, 0.7, np.random.default_rng(0))
    m = kw.get("m", 1)
    assert rel.claimed == pytest.approx(m * per_set, rel=1e-12)
    assert rel.ledger.total_epsilon() == pytest.approx(rel.claimed, rel=1e-12)
    assert synth.claimed_epsilon(0.7, data) == rel.claimed
    assert [e.set_index for e in rel.ledger.entries] == list(range(m))
    assert {e.relation for e in rel.ledger.entries} == {"add/remove"}
    assert all(e.epsilon == pytest.approx(per_set) for e in rel.ledger.entries)
    assert all("seed pool 'original' reads D" in e.note for e in rel.ledger.entries)
    assert rel.ledger.first_sets(1).total_epsilon() == pytest.approx(per_set)
    n_out = kw.get("n_out", 30)
    assert rel.sets.values.shape == (2, m, n_out, M) and rel.sets.schema == SCHEMA
    v = rel.sets.values
    assert np.all(v == np.round(v)) and np.all((v >= 0) & (v < np.array(CARDS)))
    assert rel.diagnostics["alpha"].shape == (2, m)
    assert synth.privacy_parameter == "epsilon_sample" and rel.kind == "records"
    again = make_synthesizer(name, **kw).release(data, 0.7, np.random.default_rng(0))
    assert np.array_equal(again.sets.values, v)


@pytest.mark.parametrize("pool", ["original", "marginal", "uniform"])
def test_pools(pool):
    codes = toy(n=30)
    synth = make_synthesizer("pegs", pool=pool, n_out=45)  # more chains than rows
    rel = synth.release(batch(codes), 1.0, np.random.default_rng(0))
    assert rel.sets.values.shape == (1, 1, 45, M)
    assert rel.diagnostics["seed_pool_from_data"][0, 0] == float(pool != "uniform")
    seeds = pegs.draw_seeds(pool, codes, CARDS, 60, 1.0, np.random.default_rng(0))
    assert seeds.shape == (1, 60, M) and np.all(seeds < np.array(CARDS))
    if pool == "original":  # without replacement within each pass over the rows
        first = cell_index(seeds[0, :30])
        assert sorted(first.tolist()) == sorted(cell_index(codes[0]).tolist())


BAD = [
    ({"tail_hash": "md5"}, "tail_hash"),
    ({"structure": "learned"}, "structure"),
    ({"structure": "mutual_information"}, "structure"),
    ({"pool": "bootstrap"}, "pool"),
    ({"head_size": -1}, "head_size"),
    ({"n_out": 0}, "n_out"),
    ({"sweeps_per_sample": 0}, "sweeps_per_sample"),
    ({"l_diversity": 0.5}, "l_diversity"),
    ({"l_diversity": 2.0, "marginal_alpha": True}, "l_diversity"),
    ({"orders": {"x9": ["x1"]}}, "orders"),
    ({"orders": {"x0": ["x0"]}}, "orders.x0"),
    ({"orders": [[1]]}, "orders"),
    ({"structure": "public", "orders": {"x0": ["x1"]}}, "orders"),
    ({"head_size": 3}, "head_size"),
    ({"m": 0}, "m"),
    ({"B": 0}, "B"),
    ({"alpha": 1.0}, "alpha"),
]


@pytest.mark.parametrize("kw,key", BAD)
def test_bad_config_is_one_line_naming_the_key(kw, key):
    name = "pegs_rs" if "B" in kw else "pegs"
    with pytest.raises(ConfigError) as err:
        synth = make_synthesizer(name, **kw)
        synth.release(batch(toy()), 1.0, np.random.default_rng(0))
    msg = str(err.value)
    assert msg.startswith(f"{key}:") and "\n" not in msg, msg


def test_bad_data_and_privacy_values():
    synth = make_synthesizer("pegs")
    for eps in (0.0, -1.0, math.inf, None):
        with pytest.raises(ConfigError, match="^epsilon_sample:"):
            synth.release(batch(toy()), eps, np.random.default_rng(0))
    bad = toy()
    bad[0, 0, 1] = 3
    with pytest.raises(ConfigError, match="^data: column 'x1' needs integer codes in 0..2$"):
        synth.release(batch(bad), 1.0, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="^data:"):
        synth.release(RecordBatch(toy().astype(float)), 1.0, np.random.default_rng(0))


def test_prepared_tables_are_reused_over_the_privacy_grid():
    """The count tables do not depend on ε: ``prepare`` builds them once (reading no randomness)
    and a release from them equals a release that fits its own."""
    synth = make_synthesizer("pegs_rs", B=3)
    data = batch(toy(reps=2))
    prepared = synth.prepare(data, np.random.default_rng(99))
    for eps in (0.5, 5.0):
        a = synth.release(data, eps, np.random.default_rng(1), prepared=prepared)
        b = synth.release(data, eps, np.random.default_rng(1))
        assert np.array_equal(a.sets.values, b.sets.values)
    public = make_synthesizer("pegs", structure="public")  # the public part reaches prepare
    pub_prepared = public.prepare(data, None, parts={"public": data})
    a = public.release(data, 0.5, np.random.default_rng(1), prepared=pub_prepared,
                       parts={"public": data})
    b = public.release(data, 0.5, np.random.default_rng(1), parts={"public": data})
    assert np.array_equal(a.sets.values, b.sets.values)
    summary = synth.privacy_summary(0.5, M)
    assert summary == {"epsilon_sample": 0.5, "epsilon_block": 1.5,
                       "alpha": pegs.alpha_for(0.5, M, 3), "B": 3, "sweeps_per_sample": 1}


def test_synthesize_on_an_ordinary_frame():
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], 50), "age": rng.choice(["0-9", "10+"], 50),
                          "cat": rng.choice(["M", "S"], 50)})
    levels = {"sex": ["F", "M", "NA"], "age": ["0-9", "10+"], "cat": ["M", "S"]}
    synth = make_synthesizer("pegs", m=2, head_size=1)
    sets = synth.synthesize(frame, 1.0, seed=4, levels=levels)
    assert len(sets) == 2 and all(list(s.columns) == ["sex", "age", "cat"] for s in sets)
    assert all(len(s) == 50 and set(s["sex"]) <= {"F", "M", "NA"} for s in sets)
    again = synth.synthesize(frame, 1.0, seed=4, levels=levels)
    assert all(s.equals(t) for s, t in zip(sets, again, strict=True))
    with pytest.raises(ConfigError, match="^levels:"):
        synth.synthesize(frame, 1.0, seed=4, levels={"sex": ["F"]})
