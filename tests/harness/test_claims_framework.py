"""The claims framework: PASS / FAIL / UNDECIDED verdicts, claims not run, claims that fail."""

import pandas as pd
import pytest

from harness.claims import (
    Claim,
    ClaimError,
    ClaimResult,
    MissingInput,
    all_of,
    any_of,
    decide,
    evaluate_claims,
    format_claims,
)

METRICS = pd.DataFrame({"method": ["A", "B"], "metric": ["bias", "bias"], "value": [0.1, 0.3]})


def _smaller_bias(m):
    v = m.set_index("method")["value"]
    return ClaimResult(bool(v["A"] < v["B"]), f"A {v['A']} vs B {v['B']}")


def _needs_ci_rows(m):
    if "ci" not in set(m["metric"]):
        raise MissingInput("no ci rows for A in this run")
    return ClaimResult(True, "")


def test_verdicts_and_claims_not_run():
    claims = [
        Claim("ok", "A has the smaller bias", _smaller_bias, ("A", "B")),
        Claim("no", "B has the smaller bias", lambda m: ClaimResult(False, "B is larger")),
        Claim("noise", "within MC error", lambda m: ClaimResult(decide(0.91, 0.9, 0.01), "")),
        Claim("gone", "C beats A", _smaller_bias, ("A", "C")),
        Claim("no_ci", "A's ci", _needs_ci_rows, ("A",)),  # an input this run did not evaluate
    ]
    table = evaluate_claims(claims, METRICS)
    assert table["verdict"].tolist() == ["PASS", "FAIL", "UNDECIDED", "NOT RUN", "NOT RUN"]
    assert table["passed"].tolist() == [True, False, None, None, None]
    assert table.loc[3, "evidence"] == "not run: C"
    assert table.loc[4, "evidence"] == "not run: no ci rows for A in this run"
    text = format_claims(table)
    assert "[PASS] ok" in text and "[FAIL] no" in text and "[UNDECIDED] noise" in text
    assert text.splitlines()[-1] == ("3 claims: 1 PASS, 1 FAIL, 1 UNDECIDED; "
                                     "2 not run (inputs missing)")


@pytest.mark.parametrize("check", [
    lambda m: m.set_index("method")["value"]["Z"],  # a missing key: not a skip
    lambda m: 1 / 0,
])
def test_a_claim_whose_code_fails_is_an_error_naming_it(check):
    with pytest.raises(ClaimError, match=r"^claim bug: its code failed \((KeyError|ZeroDivision)"):
        evaluate_claims([Claim("bug", "fails", check)], METRICS)


def test_decide_against_monte_carlo_error():
    assert decide(0.95, 0.90, 0.01) == "PASS"  # 5 MCSE above
    assert decide(0.85, 0.90, 0.01) == "FAIL"
    assert decide(0.915, 0.90, 0.01) == "UNDECIDED"  # 1.5 MCSE
    assert decide(0.85, 0.90, 0.01, above=False) == "PASS"
    assert decide(0.91, 0.90, 0.0) == "PASS"  # an exact statistic is decided by its sign
    assert decide(0.91, 0.90, float("nan")) == "PASS"
    assert decide(float("nan"), 0.90, 0.01) == "UNDECIDED"


def test_combining_parts():
    assert all_of("PASS", "PASS") == "PASS"
    assert all_of("PASS", "UNDECIDED") == "UNDECIDED"
    assert all_of("UNDECIDED", "FAIL") == "FAIL"
    assert any_of("FAIL", "PASS") == "PASS"
    assert any_of("FAIL", "UNDECIDED") == "UNDECIDED"
    assert any_of("FAIL", "FAIL") == "FAIL"


def test_a_verdict_must_be_one_of_three():
    with pytest.raises(ValueError, match="PASS"):
        ClaimResult("MAYBE", "")


def test_one_value_reads_one_row_and_tells_missing_from_ambiguous():
    from harness.claims import MissingInput, one_value

    mx = pd.DataFrame({"method": ["A", "B", "B"], "value": [1.5, 2.0, 3.0],
                       "mcse": [0.1, 0.2, 0.3]})
    assert one_value(mx[mx["method"] == "A"], "A rmse") == (1.5, 0.1)
    with pytest.raises(MissingInput, match="no rows for C rmse in this run"):
        one_value(mx[mx["method"] == "C"], "C rmse")
    with pytest.raises(KeyError, match="B rmse: 2 rows, expected 1"):
        one_value(mx[mx["method"] == "B"], "B rmse")
