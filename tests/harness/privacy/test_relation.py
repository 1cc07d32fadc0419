"""Equal privacy (issue 24 item 3): sensitivities under both neighbour relations, methods
calibrated under a study's relation (``Synthesizer.calibrate``), the table of what every method
supports, the noise each calibration implies, the audit that tells them apart, and the
statement reports give."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from harness.data import CountBatch, RecordBatch
from harness.errors import ConfigError
from harness.models import BetaBinomial
from harness.privacy import (
    PrivacyLedger,
    Sensitivity,
    UnsupportedRelation,
    audit_mechanism,
    laplace_mechanism,
)
from harness.privacy.ledger import ADD_REMOVE, SUBSTITUTION
from harness.privacy.relation import DEFAULT_DELTA, entropy_add_remove_bound
from harness.privacy.statement import privacy_statement
from harness.schema import Schema
from harness.synthesizers import make_synthesizer
from harness.synthesizers import privbayes as P
from harness.synthesizers.feature_hash import mutual_information as pairwise_mi

BOTH = (ADD_REMOVE, SUBSTITUTION)


# --- sensitivities ------------------------------------------------------------------------------
def test_sensitivity_resolves_under_the_ledgers_relation():
    counts = Sensitivity.counts()
    assert (counts.under(ADD_REMOVE), counts.under(SUBSTITUTION)) == (1.0, 2.0)
    declared = Sensitivity.declared(0.5, ADD_REMOVE)
    assert declared.under(SUBSTITUTION) == 1.0 and declared.relations() == BOTH
    assert (declared / 2).under(SUBSTITUTION) == 0.5 and (3 * counts).under(ADD_REMOVE) == 3.0
    only = Sensitivity.declared(3.0, SUBSTITUTION)
    assert only.relations() == (SUBSTITUTION,)
    with pytest.raises(UnsupportedRelation, match="no sensitivity under add/remove"):
        only.under(ADD_REMOVE)
    scales = {}
    for relation in BOTH:
        ledger = PrivacyLedger(relation=relation)
        laplace_mechanism(np.zeros(3), sensitivity=counts, epsilon=0.5,
                          rng=np.random.default_rng(0), ledger=ledger, statistic="counts")
        (entry,) = ledger.entries
        assert entry.relation == relation and entry.epsilon == 0.5
        scales[relation] = entry.scale
    assert scales == {ADD_REMOVE: 2.0, SUBSTITUTION: 4.0}  # Δ/ε: the scale doubles


def _entropy(codes, k):
    p = np.bincount(codes, minlength=k) / codes.size
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def test_entropy_and_mutual_information_add_remove_bounds_hold_on_small_data():
    """Every one-record addition to random small data sets (n = 2..7): |ΔH| ≤ h(n) for a
    variable of 4 levels, |ΔI| ≤ 3·h(n − 1) (PrivBayes's add/remove score bound) for the
    data set of n + 1 records and its n-record neighbour; the entropy bound is nearly attained."""
    g = np.random.default_rng(0)
    worst_h = 0.0
    for n in range(2, 8):
        for _ in range(40):
            x = g.integers(0, 4, n)
            for v in range(4):
                d = abs(_entropy(np.append(x, v), 4) - _entropy(x, 4))
                assert d <= entropy_add_remove_bound(n) + 1e-12
                worst_h = max(worst_h, d / entropy_add_remove_bound(n))
            codes = np.column_stack([g.integers(0, 2, n + 1), g.integers(0, 3, n + 1)])
            base = pairwise_mi(codes, (2, 3))[0, 1]
            for i in range(n + 1):  # removals from n + 1 records
                drop = pairwise_mi(np.delete(codes, i, 0), (2, 3))[0, 1]
                assert abs(drop - base) <= P.mi_sensitivity_add_remove(n + 1) + 1e-12
            for a, b in itertools.product(range(2), range(3)):  # additions to n + 1 records
                grown = pairwise_mi(np.vstack([codes, [a, b]]), (2, 3))[0, 1]
                assert abs(grown - base) <= P.mi_sensitivity_add_remove(n + 1) + 1e-12
    assert worst_h > 0.7  # the entropy bound is nearly attained (not a loose bound)


# --- what every method supports -----------------------------------------------------------------
# name -> (constructor parameters, native relations, supported relations)
SUPPORT = {
    "laplace_sanitizer": ({}, BOTH, BOTH),
    "perturbed_histogram": ({"lower": -3.0, "upper": 4.0}, BOTH, BOTH),
    "cell_histogram": ({"lower": -3.0, "upper": 4.0}, BOTH, BOTH),
    "flat_laplace": ({}, BOTH, BOTH),
    "uh_mod": ({"depth": 2}, BOTH, BOTH),
    "steps": ({"order": ["a"]}, BOTH, BOTH),
    "privbayes": ({}, BOTH, BOTH),
    # add/remove only: substitution by group privacy (ε/2 under add/remove)
    "multinomial_dirichlet": ({}, (ADD_REMOVE,), BOTH),
    "bb_mcclure_reiter": ({}, (ADD_REMOVE,), BOTH),
    "smoothed_histogram": ({"lower": -3.0, "upper": 4.0}, (ADD_REMOVE,), BOTH),
    "private_svm": ({}, (ADD_REMOVE,), BOTH),
    # privacy parameter ε per synthetic record (the claimed ε proportional to it): the same
    "pegs": ({}, (ADD_REMOVE,), BOTH),
    "pmi": ({"n_out": 20}, (ADD_REMOVE,), BOTH),
    # substitution only: their sensitivities need a public n
    "dip": ({}, (SUBSTITUTION,), (SUBSTITUTION,)),
    "lrm": ({}, (SUBSTITUTION,), (SUBSTITUTION,)),
    "opm": ({}, (SUBSTITUTION,), (SUBSTITUTION,)),
    "exm": ({}, (SUBSTITUTION,), (SUBSTITUTION,)),
    "opm_glm": ({"response": -1}, (SUBSTITUTION,), (SUBSTITUTION,)),
    "fbs": ({}, (SUBSTITUTION,), (SUBSTITUTION,)),
    "fbp": ({}, (SUBSTITUTION,), (SUBSTITUTION,)),
    "laplace_tables": ({}, (SUBSTITUTION,), (SUBSTITUTION,)),
}


@pytest.mark.parametrize("name", sorted(SUPPORT))
def test_methods_declare_the_relations_they_support(name):
    params, native, supported = SUPPORT[name]
    synth = make_synthesizer(name, **params)
    assert synth.native_relations() == native and synth.supported_relations() == supported
    for relation in BOTH:
        if relation in supported:
            assert synth.calibrate(relation, "X").neighbour_relation == relation
        else:
            with pytest.raises(ConfigError) as err:
                make_synthesizer(name, **params).calibrate(relation, "X")
            assert str(err.value) == (f"study.relation: method X ({name}) has no calibration "
                                       f"under {relation} (supports: {', '.join(supported)})")


def test_non_private_methods_take_any_relation_and_none_leaves_the_method_alone():
    assert make_synthesizer("ori").calibrate(ADD_REMOVE).neighbour_relation == ADD_REMOVE
    synth = make_synthesizer("dip").calibrate(None, delta=1e-6)
    assert synth.neighbour_relation == SUBSTITUTION and synth.target_delta == 1e-6
    assert make_synthesizer("dip").target_delta == DEFAULT_DELTA == 1e-5


# --- the noise each calibration implies ---------------------------------------------------------
CODED = Schema.from_config({"columns": [{"name": "a", "levels": [0, 1]},
                                        {"name": "b", "levels": [0, 1, 2]},
                                        {"name": "c", "levels": [0, 1]}]})


def _coded(n=60, r=2):
    g = np.random.default_rng(1)
    values = np.stack([g.integers(0, k, (r, n)) for k in (2, 3, 2)], -1).astype(float)
    return RecordBatch(values, columns=CODED.names, schema=CODED)


def _numeric(n=80, r=2):
    return RecordBatch(np.clip(np.random.default_rng(2).normal(0, 1, (r, n, 1)), -3.0, 4.0))


FAMILIES = {  # name -> (parameters, data, entries whose scale is Δ/ε of a count)
    "laplace_sanitizer": ({"m": 2}, lambda: CountBatch(np.array([[30, 30, 40]]), 100, (0, 1, 2)),
                          "laplace"),
    "perturbed_histogram": ({"lower": -3.0, "upper": 4.0, "m": 2}, _numeric, "laplace"),
    "cell_histogram": ({"lower": -3.0, "upper": 4.0, "m": 2}, _numeric, "laplace"),
    "flat_laplace": ({"m": 2}, _coded, "laplace"),
    "uh_mod": ({"depth": 2, "m": 2}, _coded, "laplace"),
    "steps": ({"ranking": "statistical", "selection": "grouped_split", "r": 0.2, "m": 2},
              _coded, "laplace"),
    "privbayes": ({"m": 2}, _coded, "laplace"),
    # add/remove only: substitution by group privacy (the Laplace scale doubles all the same)
    "modips": ({"model": BetaBinomial(1 / 3, 1 / 3), "m": 2},
               lambda: CountBatch(np.array([[30, 70]]), 100), "laplace"),
    "multinomial_dirichlet": ({"m": 2}, lambda: CountBatch(np.array([[30, 70]]), 100), None),
    "smoothed_histogram": ({"lower": -3.0, "upper": 4.0}, _numeric, None),
}
GROUP_PRIVACY = ("modips", "multinomial_dirichlet", "smoothed_histogram")


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_release_under_each_relation_spends_the_same_epsilon_with_the_implied_noise(name):
    params, data, counts = FAMILIES[name]
    ledgers = {}
    for relation in BOTH:
        synth = make_synthesizer(name, **params).calibrate(relation)
        rel = synth.release(data(), 2.0, np.random.default_rng(3))
        assert rel.ledger.total_epsilon() == pytest.approx(2.0, rel=1e-12)
        assert rel.ledger.relation == relation
        assert {e.relation for e in rel.ledger.entries} == {relation}
        ledgers[relation] = rel.ledger.entries
    ar, sub = ledgers[ADD_REMOVE], ledgers[SUBSTITUTION]
    assert [e.epsilon for e in ar] == pytest.approx([e.epsilon for e in sub], rel=1e-12)
    # group privacy: every entry at twice the ε of an ε/2 release under add/remove
    assert all(("group privacy" in e.note) is (name in GROUP_PRIVACY) for e in sub)
    if counts is None:
        return
    pairs = [(a, s) for a, s in zip(ar, sub, strict=True) if a.mechanism == counts]
    assert pairs
    for a, s in pairs:  # counts: Δ = 1 under add/remove, 2 under substitution
        assert s.sensitivity == 2 * a.sensitivity and s.scale == pytest.approx(2 * a.scale)


def test_steps_selection_and_privbayes_scores_double_their_sensitivity_under_substitution():
    steps = {r: make_synthesizer("steps", ranking="statistical", selection="grouped_split",
                                 r=0.2).calibrate(r) for r in BOTH}
    assert (steps[ADD_REMOVE].delta_u, steps[SUBSTITUTION].delta_u) == (4.0, 8.0)
    codes = _coded().values.astype(np.int64)
    (cand,) = P.candidate_scores(codes, np.array([2, 3, 2]), 1).values()
    ratio = cand.scaled_scores(SUBSTITUTION) / cand.scaled_scores(ADD_REMOVE)
    expected = P.mi_sensitivity_add_remove(60) / cand.sensitivity
    np.testing.assert_allclose(ratio[np.isfinite(ratio)], np.broadcast_to(
        expected, ratio.shape)[np.isfinite(ratio)], rtol=1e-12)


def test_a_given_substitution_sensitivity_has_no_add_remove_form():
    synth = make_synthesizer("flat_laplace", neighbours="substitution", sensitivity=2.0)
    assert synth.supported_relations() == (SUBSTITUTION,)
    with pytest.raises(ConfigError, match=r"flat_laplace\) has no calibration under add/remove"):
        synth.calibrate(ADD_REMOVE, "FL")


# --- the audit tells the calibrations apart -----------------------------------------------------
COUNTS = np.array([30.0, 30.0, 40.0])
MOVED = np.array([29.0, 31.0, 40.0])  # one record changed from the first cell to the second


def _released_counts(relation):
    synth = make_synthesizer("laplace_sanitizer", m=1, public_total=False).calibrate(relation)

    def sample(counts, rng, size):
        data = CountBatch(np.broadcast_to(counts, (size, 3)).astype(np.int64), 100, (0, 1, 2))
        return synth.release(data, 1.0, rng).sets.counts[:, 0, :2].astype(float)

    return sample


@pytest.mark.parametrize("relation, passes, n_samples", [(SUBSTITUTION, True, 20_000),
                                                         (ADD_REMOVE, False, 60_000)])
def test_laplace_sanitizer_audit_on_substitution_neighbours(relation, passes, n_samples):
    """ε = 1 on neighbours that differ in one changed record: the substitution calibration
    (Δ = 2) passes; the add/remove one (Δ = 1, two counts move) realises up to 2ε and fails."""
    result = audit_mechanism(_released_counts(relation), COUNTS, MOVED, claimed_epsilon=1.0,
                             n_samples=n_samples, rng=np.random.default_rng(11))
    print(relation, result.summary())
    assert result.passed is passes


TABLE = Schema.from_config({"columns": [{"name": "a", "levels": [0, 1]},
                                        {"name": "b", "levels": [0, 1]}]})
RECORDS = np.array([[0, 0]] * 3 + [[1, 1]] * 3 + [[0, 1]] * 2, dtype=float)
CHANGED = np.concatenate([[[1.0, 1.0]], RECORDS[1:]])


def test_flat_laplace_calibrated_under_substitution_by_the_study_passes_the_audit():
    """The tree engine (STEPS, UH, flat Laplace) calibrated by ``calibrate`` (what
    ``study.relation`` does) rather than its ``neighbours`` parameter: Δ = 2, passes on a
    changed record; the add/remove negative control is in test_steps_privacy.py."""
    synth = make_synthesizer("flat_laplace", m=1).calibrate(SUBSTITUTION)

    def sample(rows, rng, size):
        data = RecordBatch(np.broadcast_to(rows, (size, *rows.shape)).copy(), schema=TABLE)
        released = synth.release(data, 1.0, rng).sets.values[:, 0]
        cells = (released[..., 0] * 2 + released[..., 1]).astype(int)
        return np.stack([(cells == c).sum(axis=1) for c in range(4)], axis=1)

    result = audit_mechanism(sample, RECORDS, CHANGED, claimed_epsilon=1.0, n_samples=20_000,
                             rng=np.random.default_rng(9))
    print(result.summary())
    assert result.passed


# --- the statement reports give -------------------------------------------------------------------
def _rows(*methods):
    return pd.DataFrame([{"method": m, "epsilon": e, "relation": r, "delta": d}
                         for m, e, r, d in methods])


def test_privacy_statement_names_relations_and_delta():
    one = _rows(("Ori", math.nan, "", math.nan), ("A", 1.0, ADD_REMOVE, 0.0),
                ("B", 1.0, ADD_REMOVE, 0.0))
    assert privacy_statement(one) == (
        "Every private method is calibrated under add/remove neighbours, so rows at the same ε "
        "are at the same privacy. Every private method is pure ε-DP (δ = 0).")
    mixed = _rows(("A", 1.0, ADD_REMOVE, 0.0), ("MST", 1.0, ADD_REMOVE, 1e-5),
                  ("PB", 1.0, SUBSTITUTION, 0.0))
    text = privacy_statement(mixed)
    assert "different neighbour relations (A, MST: add/remove; PB: substitution)" in text
    assert "MST is (ε, δ)-DP at δ = 1e-05 and is compared with pure ε-DP methods (A, PB)" in text
    assert privacy_statement(_rows(("M", 1.0, SUBSTITUTION, 1e-6))).endswith(
        "Every private method is (ε, δ)-DP, at δ = 1e-06.")
    assert "do not record" in privacy_statement(pd.DataFrame({"method": ["A"],
                                                              "epsilon": [1.0]}))


def test_group_privacy_halves_an_epsilon_per_record_too():
    """PeGS's privacy value is an ε per synthetic record (claimed ε proportional to it): under
    substitution it releases at half the value and records twice each entry's ε."""
    entries = {}
    for relation in BOTH:
        synth = make_synthesizer("pegs").calibrate(relation)
        rel = synth.release(_coded(), 0.05, np.random.default_rng(0))
        assert rel.ledger.total_epsilon() == pytest.approx(synth.claimed_epsilon(0.05, _coded()))
        entries[relation] = rel.ledger.entries
    assert [e.epsilon for e in entries[SUBSTITUTION]] == pytest.approx(
        [e.epsilon for e in entries[ADD_REMOVE]])
    assert all(e.note.endswith("substitution by group privacy: add/remove at ε/2")
               for e in entries[SUBSTITUTION])
