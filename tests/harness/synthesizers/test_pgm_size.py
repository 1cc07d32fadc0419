"""AIM's model-size filter (harness/synthesizers/pgm_size.py, pgm.aim_small): the vectorised
junction-tree sizes equal mbi's ``hypothetical_model_size`` and the filter admits exactly the
candidates a filter calling mbi per candidate admits, on random schemas and clique sets,
with budgets placed exactly on candidates' sizes (a budget one cell short must admit fewer)."""

from itertools import combinations

import numpy as np
import pytest

pytest.importorskip("mbi")

from mbi import junction_tree  # noqa: E402

from harness.synthesizers.pgm import aim_candidates, aim_small  # noqa: E402
from harness.synthesizers.pgm_model import column_names, mbi_domain  # noqa: E402
from harness.synthesizers.pgm_size import candidate_sizes_mb  # noqa: E402

CELL_MB = 8 / 2 ** 20


def mbi_size(cards, cliques) -> float:
    names = column_names(len(cards))
    return float(junction_tree.hypothetical_model_size(
        mbi_domain(cards), [tuple(names[a] for a in c) for c in cliques]))


def slow_sizes(cards, measured, candidates) -> list[float]:
    """mbi's size of the model with each candidate (Alg. 2's definition)."""
    return [mbi_size(cards, [*set(measured), c]) for c in candidates]


def slow_filter(cards, measured, candidates, limit, sizes=None):
    """Alg. 2's filter as the definition reads: the candidates whose model (mbi's size, from
    ``sizes`` when given: :func:`slow_sizes` of the same arguments) fits ``limit``."""
    sizes = slow_sizes(cards, measured, candidates) if sizes is None else sizes
    return [c for c, size in zip(candidates, sizes, strict=True) if size <= limit]


def random_case(rng, d_max=9, card_max=7):
    d = int(rng.integers(2, d_max + 1))
    cards = tuple(int(c) for c in rng.integers(1, card_max, d))
    measured = [(j,) for j in range(d)] if rng.random() < 0.7 else []
    for _ in range(int(rng.integers(0, 8))):
        size = int(rng.integers(2, min(d, 4) + 1))
        measured.append(tuple(sorted(rng.choice(d, size, replace=False).tolist())))
    return cards, measured, list(aim_candidates(d, 3))


def test_sizes_equal_mbi_on_random_schemas():
    rng = np.random.default_rng(0)
    for _ in range(25):
        cards, measured, candidates = random_case(rng)
        fast = candidate_sizes_mb(cards, measured, candidates)
        assert fast == [mbi_size(cards, [*measured, c]) for c in candidates]
    # trees (post-order, no fill-in), a column in no clique, a 13-column schema
    assert candidate_sizes_mb((3, 4, 5, 6), [(0, 1), (1, 2)], [(2, 3), (0, 3), (3,)]) == [
        mbi_size((3, 4, 5, 6), [(0, 1), (1, 2), c]) for c in [(2, 3), (0, 3), (3,)]]
    cards = (6, 18, 3, 4, 7, 16, 16, 13, 9, 25, 25, 3, 2)
    measured = [(j,) for j in range(13)] + [(0, 4, 9), (4, 9, 10), (1, 2, 12), (5, 6, 7),
                                            (7, 11), (3, 8, 9)]
    candidates = list(aim_candidates(13, 3))
    assert candidate_sizes_mb(cards, measured, candidates) == [
        mbi_size(cards, [*measured, c]) for c in candidates]


def test_filter_admits_exactly_what_mbi_admits_and_a_short_budget_fails():
    rng = np.random.default_rng(1)
    boundary_cases = 0
    for _ in range(15):
        cards, measured, candidates = random_case(rng)
        sizes = sorted({mbi_size(cards, [*measured, c]) for c in candidates})
        reference = slow_sizes(cards, measured, candidates)  # once for the case's four limits
        for limit in (sizes[0], sizes[len(sizes) // 2], sizes[-1], sizes[-1] * 0.5):
            admitted = aim_small(cards, measured, candidates, limit, {})
            assert admitted == slow_filter(cards, measured, candidates, limit, reference)
            # planted off-by-one: a budget one cell short of a candidate's size excludes it
            if limit in sizes:
                short = aim_small(cards, measured, candidates, limit - CELL_MB, {})
                assert short != admitted
                boundary_cases += 1
    assert boundary_cases >= 30


def test_filter_cache_across_rounds_matches_fresh():
    """The size cache kept across AIM's rounds gives the filter of a fresh computation."""
    rng = np.random.default_rng(2)
    cards, measured, candidates = random_case(rng, d_max=8)
    cache: dict = {}
    for c in list(combinations(range(len(cards)), 2))[:6]:
        measured = [*measured, c]
        limit = float(np.median(candidate_sizes_mb(cards, measured, candidates)))
        assert aim_small(cards, measured, candidates, limit, cache) == slow_filter(
            cards, measured, candidates, limit)
