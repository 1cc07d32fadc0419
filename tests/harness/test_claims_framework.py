"""The claims framework: verdicts, skips and the summary line."""

import pandas as pd

from harness.claims import Claim, ClaimResult, evaluate_claims, format_claims

METRICS = pd.DataFrame({"method": ["A", "B"], "metric": ["bias", "bias"], "value": [0.1, 0.3]})


def _smaller_bias(m):
    v = m.set_index("method")["value"]
    return ClaimResult(bool(v["A"] < v["B"]), f"A {v['A']} vs B {v['B']}")


def test_pass_fail_and_skip():
    claims = [
        Claim("ok", "A has the smaller bias", _smaller_bias, ("A", "B")),
        Claim("no", "B has the smaller bias", lambda m: ClaimResult(False, "B is larger")),
        Claim("gone", "C beats A", _smaller_bias, ("A", "C")),
        Claim("grid", "needs a missing key", lambda m: m.set_index("method")["value"]["Z"]),
    ]
    table = evaluate_claims(claims, METRICS)
    assert table["passed"].tolist() == [True, False, None, None]
    assert "['C']" in table.loc[2, "evidence"]
    assert "not evaluable" in table.loc[3, "evidence"]
    text = format_claims(table)
    assert "[PASS] ok" in text and "[FAIL] no" in text and "[SKIP] gone" in text
    assert text.splitlines()[-1] == "1 of 2 claims hold, 2 not evaluable on this run"


def test_a_bug_in_a_claim_is_not_hidden():
    claims = [Claim("bug", "divides by zero", lambda m: 1 / 0)]
    try:
        evaluate_claims(claims, METRICS)
    except ZeroDivisionError:
        return
    raise AssertionError("a programming error in a claim must propagate")
