"""MST and AIM on schemas larger than the dense model (harness/synthesizers/pgm_tree.py,
pgm_compress.py): the junction-tree fit agrees with the dense fit on the same measurements,
its ancestral sampler draws from the model, MST's domain compression, the ledger of a release
forced through the junction-tree path, bit-identical re-runs (also in a fresh process with
another string-hash seed) and a park_ghosh_maps-shaped schema (13 columns, 1.0e12 cells)."""

import hashlib
import math
import os
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from harness.data import RecordBatch
from harness.errors import ConfigError
from harness.privacy import zcdp_rho
from harness.schema import Categorical, Schema
from harness.synthesizers import make_synthesizer

pytest.importorskip("mbi")

from harness.synthesizers.pgm import empty_slots, mst_slots  # noqa: E402
from harness.synthesizers.pgm_compress import Compression  # noqa: E402
from harness.synthesizers.pgm_model import (  # noqa: E402
    Estimation,
    clique_counts,
    fit_joint,
    model_size_mb,
)
from harness.synthesizers.pgm_tree import CalibratedTree, fit_tree  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_pgm import CARDS, coded, two_way_tvd  # noqa: E402

#: park_ghosh_maps' coded columns (results/reference/benchmark/*/interface.csv)
PARK_GHOSH_CARDS = (6, 18, 3, 4, 7, 16, 16, 13, 9, 25, 25, 3, 2)
TIGHT = Estimation(max_iters=3000, tol=1e-9, patience=3)


def measurements(seed=0, sd=5.0, pairs=((0, 1), (1, 2))):
    """Noisy one-way marginals and ``pairs`` (default: the chain's) of two replicates of the
    test schema, in MST's slots (the other pairs unmeasured)."""
    codes = coded(reps=2, n=3000, seed=seed).values.astype(np.int64)
    rng = np.random.default_rng(seed)
    slots = mst_slots(len(CARDS))
    values, sigmas = empty_slots(slots, CARDS, 2)
    for k, clique in enumerate(slots):
        if len(clique) == 1 or clique in pairs:
            counts = clique_counts(codes, clique, CARDS)
            values[k] = counts + rng.normal(0, sd, counts.shape)
            sigmas[:, k] = sd
    return slots, values, sigmas


@pytest.mark.parametrize("pairs", [((0, 1), (1, 2)), ()])
def test_tree_fit_matches_the_dense_fit_on_the_same_measurements(pairs):
    """Same convex problem, two representations (a chain; one-way marginals only, a forest):
    every one- and two-way marginal of the two fits agrees to 1e-3 of the total (a wrong
    clique routing, separator or total is off by far more); (c0, c2) crosses cliques."""
    slots, values, sigmas = measurements(pairs=pairs)
    dense = fit_joint(CARDS, slots, values, sigmas, TIGHT)
    tree = fit_tree(CARDS, slots, values, sigmas, TIGHT)
    total = dense.joint.reshape(2, -1).sum(axis=1)
    assert np.allclose([m.total for m in tree.models], total, rtol=1e-12)
    for clique in [(j,) for j in range(3)] + list(combinations(range(3), 2)):
        gap = np.abs(dense.marginal(clique) - tree.marginal(clique)).sum(axis=1)
        assert np.all(gap < 1e-3 * total), (clique, gap)


def test_ancestral_sampler_draws_from_the_model():
    """40 000 records from the tree sampler against the model's full joint (from the dense
    fit of the same measurements): TVD within sampling error (about 0.01 for 24 cells; a
    sampler ignoring the separator's condition gives ≥ 0.1 here)."""
    slots, values, sigmas = measurements(seed=1)
    dense = fit_joint(CARDS, slots, values, sigmas, TIGHT)
    tree = fit_tree(CARDS, slots, values, sigmas, TIGHT)
    draws = CalibratedTree.of(tree.models[0]).sample(40_000, np.random.default_rng(3))
    cells = np.ravel_multi_index(tuple(draws.T), CARDS)
    freq = np.bincount(cells, minlength=math.prod(CARDS)) / len(cells)
    joint = dense.joint[0].ravel() / dense.joint[0].sum()
    assert 0.5 * np.abs(freq - joint).sum() < 0.025
    again = CalibratedTree.of(tree.models[0]).sample(40_000, np.random.default_rng(3))
    assert np.array_equal(draws, again)


def test_compression_merges_levels_below_three_sigma():
    """The paper's rule on noisy one-way counts: levels ≥ 3σ kept, the others merged into one
    extra level whose count is their sum with noise SD σ√k; decoding spreads the merged level
    uniformly over its original levels."""
    sigma = 2.0
    noisy = [np.array([10.0, 5.9, 7.0, -1.0]), np.array([6.0, 8.0]), np.array([1.0, 0.5])]
    comp = Compression.from_oneway(noisy, sigma)
    assert comp.cards == (3, 2, 1)
    values, scales = comp.oneway(0, noisy[0])
    assert np.allclose(values, [10.0, 7.0, 4.9]) and np.allclose(scales, [1, 1, math.sqrt(2)])
    assert np.array_equal(comp.oneway(1, noisy[1])[0], noisy[1])
    codes = np.array([[0, 1, 0], [1, 0, 1], [2, 1, 0], [3, 0, 1]])
    assert np.array_equal(comp.encode(codes), [[0, 1, 0], [2, 0, 0], [1, 1, 0], [2, 0, 0]])
    merged = np.tile([[2, 0, 0]], (4000, 1))
    decoded = comp.decode(merged, np.random.default_rng(0))
    assert set(decoded[:, 0]) == {1, 3} and set(decoded[:, 2]) == {0, 1}
    assert abs(np.mean(decoded[:, 0] == 1) - 0.5) < 0.03
    kept = comp.decode(np.array([[0, 1, 0], [1, 0, 0]]), np.random.default_rng(0))
    assert np.array_equal(kept[:, :2], [[0, 1], [2, 0]])


@pytest.mark.parametrize("name,kwargs", [("mst", {}), ("mst", {"compress": False}),
                                         ("aim", {"rounds": 6})])
def test_junction_tree_release_ledger_and_reproducibility(name, kwargs):
    """A release forced through the junction-tree path (``dense_cells=0``) spends exactly the
    claimed ρ, with the same ledger entries (mechanisms, ρ, σ, sensitivities) as the dense
    path's release, and is bit-identical from the same stream; at ε = 200 it reproduces the
    data's two-way tables (as the dense path does in test_pgm.py)."""
    data = coded(reps=2, n=2000)
    tree = make_synthesizer(name, dense_cells=0, **kwargs)
    rel = tree.release(data, 200.0, np.random.default_rng(4))
    again = tree.release(data, 200.0, np.random.default_rng(4))
    assert np.array_equal(rel.sets.values, again.sets.values)
    assert rel.ledger.total_rho() == pytest.approx(zcdp_rho(200.0, 1e-5), rel=1e-12)
    assert rel.epsilon == 200.0 and rel.ledger.total_epsilon() == pytest.approx(200.0)
    dense = make_synthesizer(name, **kwargs).release(data, 200.0, np.random.default_rng(4))
    if name == "mst":  # AIM's rounds depend on the data and the fit: totals compared above
        assert [(e.mechanism, e.rho, e.scale, e.sensitivity) for e in rel.ledger.entries] == [
            (e.mechanism, e.rho, e.scale, e.sensitivity) for e in dense.ledger.entries]
    assert two_way_tvd(rel.sets.values[:, 0], data) < 0.06


@pytest.mark.parametrize("name,levels,dense", [
    ("mst", (2,) * 14, True), ("mst", (2,) * 15, False), ("aim", (2,) * 15, True)])
def test_path_threshold(monkeypatch, name, levels, dense):
    """MST takes the junction-tree path above 2^14 cells (pgm.MST_DENSE_CELLS), AIM above
    2^20 (pgm_model.JOINT_LIMIT); the fit is stopped once the path is known."""
    from harness.synthesizers import pgm

    schema = Schema(tuple(Categorical(f"c{j}", tuple(range(k))) for j, k in
                          enumerate(levels)))
    data = RecordBatch(np.zeros((1, 10, len(levels))), columns=schema.names, schema=schema)
    taken = []

    def stop(self, codes, cards, rho, ledger, rng, label, path_dense):
        taken.append(path_dense)
        raise StopIteration

    monkeypatch.setattr(type(make_synthesizer(name)), "_fit", stop)
    with pytest.raises(StopIteration):
        make_synthesizer(name).release(data, 1.0, np.random.default_rng(0))
    assert taken == [dense]
    assert pgm.MST_DENSE_CELLS == 2 ** 14


def test_release_is_bit_identical_in_a_fresh_process_with_another_hash_seed():
    """mbi builds its junction trees with sets of column names: a new process with another
    PYTHONHASHSEED must give the same bits as this one. One fresh process, against this
    process's own release (its start-up, imports and JIT compilation are most of this test's
    cost): its seed differs from this process's, which is the environment's PYTHONHASHSEED
    when set (the child then takes that + 1) and otherwise a random one (the child takes 1)."""
    here = str(Path(__file__).parent)
    script = (f"import hashlib, sys, numpy as np; sys.path.insert(0, {here!r}); "
              "from test_pgm import coded; from harness.synthesizers import make_synthesizer; "
              "rel = make_synthesizer('mst', dense_cells=0).release(coded(2, 2000), 1.0, "
              "np.random.default_rng(9)); "
              "print(hashlib.sha256(rel.sets.values.tobytes()).hexdigest())")
    ours = os.environ.get("PYTHONHASHSEED", "random")
    seed = str(int(ours) + 1) if ours.isdigit() else "1"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True)
    # the data of the junction-tree release test above, whose compiled fit this one reuses
    rel = make_synthesizer("mst", dense_cells=0).release(coded(2, 2000), 1.0,
                                                         np.random.default_rng(9))
    assert out.stdout.strip() == hashlib.sha256(rel.sets.values.tobytes()).hexdigest()


def park_ghosh_shaped(n=3000, seed=0) -> RecordBatch:
    """13 columns of park_ghosh_maps' cardinalities (1.0e12 cells), each following the
    previous one with probability 0.6 (a chain), one replicate."""
    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, PARK_GHOSH_CARDS[0], n)]
    for k in PARK_GHOSH_CARDS[1:]:
        cols.append(np.where(rng.random(n) < 0.6, cols[-1] % k, rng.integers(0, k, n)))
    schema = Schema(tuple(Categorical(f"c{j}", tuple(range(k)))
                          for j, k in enumerate(PARK_GHOSH_CARDS)))
    return RecordBatch(np.stack(cols, axis=-1)[None].astype(float), columns=schema.names,
                       schema=schema)


@pytest.mark.parametrize("name,kwargs", [("mst", {}), ("aim", {"rounds": 16,
                                                                "max_model_size": 0.05})])
def test_park_ghosh_shaped_schema_releases(name, kwargs):
    """13 columns, 1.0e12 cells (beyond the dense limit): MST and AIM release records in the
    schema, spending the claimed ρ; AIM's model stays within its size cap (0.05 MB here)."""
    data = park_ghosh_shaped()
    assert math.prod(PARK_GHOSH_CARDS) > 2 ** 20
    synth = make_synthesizer(name, **kwargs)
    assert getattr(synth, "max_cells", None) is None  # the benchmark no longer skips it
    fits = []
    original = synth._fit
    synth._fit = lambda *a: fits.append(original(*a)) or fits[-1]
    rel = synth.release(data, 50.0, np.random.default_rng(0))
    v = rel.sets.values
    assert v.shape == (1, 1, 3000, 13) and np.all((v >= 0) & (v < np.array(PARK_GHOSH_CARDS)))
    assert rel.ledger.total_rho() == pytest.approx(zcdp_rho(50.0, 1e-5), rel=1e-12)
    model = fits[0].models[0]
    if name == "aim":
        assert model_size_mb(model.cards, list(model.potentials)) <= 0.05
    else:  # MST: a tree of d − 1 pairs on the (compressed) columns
        assert sum(len(c) == 2 for c in model.potentials) == 12
    # the chain's neighbours stay dependent in the release (c1 = c0 % 18 for 60 %)
    assert np.mean(v[0, 0, :, 1] == v[0, 0, :, 0] % 18) > 0.4
    if name == "aim":  # rounds that leave the one-way step all of ρ: one line naming rounds
        with pytest.raises(ConfigError, match="rounds: .* unless rounds > 11.7"):
            make_synthesizer("aim", rounds=11).release(data, 50.0, np.random.default_rng(0))
