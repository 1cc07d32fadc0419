import math

import pytest

from harness.privacy.ledger import LedgerEntry, PrivacyLedger


def entry(eps, group=None, statistic="s"):
    return LedgerEntry(statistic, "laplace", eps, parallel_group=group)


def test_empty_ledger_spends_nothing():
    ledger = PrivacyLedger()
    assert ledger.total_epsilon() == 0.0
    assert len(ledger) == 0


def test_sequential_entries_sum():
    ledger = PrivacyLedger()
    for eps in (0.1, 0.25, 0.5):
        ledger.record(entry(eps))
    assert len(ledger) == 3
    assert ledger.total_epsilon() == pytest.approx(0.85, rel=1e-12)


def test_parallel_group_costs_its_maximum():
    ledger = PrivacyLedger()
    for eps in (0.3, 0.7, 0.5):
        ledger.record(entry(eps, group="cells"))
    assert ledger.total_epsilon() == pytest.approx(0.7, rel=1e-12)


def test_sequential_and_parallel_groups_mix():
    ledger = PrivacyLedger()
    ledger.record(entry(0.2))
    ledger.record(entry(0.3, group="a"))
    ledger.record(entry(0.1, group="a"))
    ledger.record(entry(0.4, group="b"))
    ledger.record(entry(0.9, group="b"))
    ledger.record(entry(0.05))
    # 0.2 + 0.05 sequential, max(a) = 0.3, max(b) = 0.9
    assert ledger.total_epsilon() == pytest.approx(1.45, rel=1e-12)


def test_check_total_accepts_match_up_to_rounding():
    ledger = PrivacyLedger()
    ledger.record(entry(0.1))
    ledger.record(entry(0.2))
    ledger.check_total(0.3)  # 0.1 + 0.2 != 0.3 exactly in floating point
    ledger.check_total(0.30000000000000004)


def test_check_total_raises_on_mismatch():
    ledger = PrivacyLedger()
    ledger.record(entry(0.5))
    ledger.record(entry(0.5, group="g"))
    with pytest.raises(AssertionError, match="composes to 1.0"):
        ledger.check_total(0.5)
    with pytest.raises(AssertionError):
        ledger.check_total(1.0 + 1e-6)
    ledger.check_total(1.0)


def test_check_total_claimed_epsilon_with_empty_ledger_raises():
    with pytest.raises(AssertionError):
        PrivacyLedger().check_total(1.0)


def test_non_private_release_must_not_record_spending():
    PrivacyLedger().check_total(None)
    ledger = PrivacyLedger()
    ledger.record(entry(0.1))
    with pytest.raises(AssertionError, match="non-private"):
        ledger.check_total(None)


@pytest.mark.parametrize("eps", [0.0, -1.0, math.inf, -math.inf, math.nan])
def test_record_rejects_non_positive_or_non_finite_epsilon(eps):
    ledger = PrivacyLedger()
    with pytest.raises(ValueError):
        ledger.record(entry(eps))
    assert len(ledger) == 0
