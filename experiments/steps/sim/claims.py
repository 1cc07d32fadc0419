"""The simulation's conclusions (§4.1; spec 003 §7.2) as claims on the aggregated metrics,
decided against Monte Carlo error (``harness.claims.decide``). Thresholds are fixed from the
wording before the paper-profile run:

* "best"/"worst" on a statistic: the method's mean over the 8 (n, ε) cells of the model is
  below (best) / above (worst) every other DP method's of the comparison;
* statistics: mean |bias| and mean RMSE over the coefficients, mean |CP − 0.95|, prediction
  RMSE (``tables.summary``);
* "improves with n": the mean over ε at n = 10,000 is below that at n = 4,000; "with ε": the
  mean over n at ε = 10 is below that at ε = 0.5; "moves further from 95 %": |CP − .95| at
  ε = 10 above that at ε = 0.5, at each n;
* "no clear trend": the relative change between the ends (n or ε) is within 10 %.

The paper's PrivBayes ran the 2019 DataSynthesizer code (near-zero noise, spec §3.2): claims
about PrivBayes are checked on ``PrivBayes-DS2019`` (ids ``*_ds2019``) and on the DP
``PrivBayes`` (``correct`` mode). The comparison set is STEPS (the paper's AIC/EM grouped
split, ``tree_mode: em_grouped``; ``STEPS-fixed``, the reported split as a fixed tree, is not
compared), UH-mod and the PrivBayes of the claim.
"""

from __future__ import annotations

import numpy as np

from harness.claims import Claim, ClaimResult, MissingInput, all_of, decide

from .tables import summary

MODELS = {"M1": "main_effect", "M2": "saturated"}
NAMES = {"abs_bias": "|bias|", "rmse": "RMSE", "cp_gap": "|CP-.95|", "pred_rmse": "pred RMSE"}
PB = {"ds2019": "PrivBayes-DS2019", "correct": "PrivBayes"}


#: (metrics frame, its summary) of the frame last summarised: every claim reads the same frame,
#: and the summary scans all of it (the frame is kept, so ``is`` cannot match a new one)
_LAST: list = []


def _summary(mx):
    if not _LAST or _LAST[0][0] is not mx:
        _LAST[:] = [(mx, summary(mx))]
    return _LAST[0][1]


def _cell_mean(mx, model, method, stat, **where):
    s = _summary(mx)
    # one mask over the summary's arrays (the rows, in order, of a filter per key)
    sel = (s["model"].to_numpy() == model) & (s["method"].to_numpy() == method)
    for k, v in where.items():
        sel &= np.isclose(s[k].astype(float).to_numpy(), v)
    s = s[sel]
    if s.empty:
        raise MissingInput(f"no rows for {model} {method} {where} in this run")
    return float(s[stat].mean()), float(np.sqrt((s[f"{stat}_mcse"] ** 2).sum()) / len(s))


def _f(x):
    return f"{x:.3g}"  # three significant digits, as the report's tables


def _extreme(model, method, others, stats, best=True):
    def check(mx):
        parts, text = [], []
        for stat in stats:
            v, se = _cell_mean(mx, model, method, stat)
            for o in others:
                w, sw = _cell_mean(mx, model, o, stat)
                diff = (w - v) if best else (v - w)
                parts.append(decide(diff, 0.0, float(np.hypot(se, sw))))
                text.append(f"{NAMES[stat]} {method} {_f(v)} vs {o} {_f(w)}")
        return ClaimResult(all_of(*parts), "; ".join(text))
    return check


def _improves(model, methods, stats, axis):
    lo, hi = {"n": (4000, 10000), "privacy": (0.5, 10.0)}[axis]

    def check(mx):
        parts, text = [], []
        for method in methods:
            for stat in stats:
                a, sa = _cell_mean(mx, model, method, stat, **{axis: lo})
                b, sb = _cell_mean(mx, model, method, stat, **{axis: hi})
                parts.append(decide(a - b, 0.0, float(np.hypot(sa, sb))))
                text.append(f"{method} {NAMES[stat]} {axis}={lo:g}: {_f(a)} -> {hi:g}: {_f(b)}")
        return ClaimResult(all_of(*parts), "; ".join(text))
    return check


def _cp_drifts(model, method):
    def check(mx):
        parts, text = [], []
        for n in (4000, 10000):
            a, sa = _cell_mean(mx, model, method, "cp_gap", n=n, privacy=0.5)
            b, sb = _cell_mean(mx, model, method, "cp_gap", n=n, privacy=10.0)
            parts.append(decide(b - a, 0.0, float(np.hypot(sa, sb))))
            text.append(f"n={n}: |CP-.95| ε=0.5 {_f(a)} -> ε=10 {_f(b)}")
        return ClaimResult(all_of(*parts), "; ".join(text))
    return check


def _no_trend(model, method, stat="rmse", tolerance=0.10):
    def check(mx):
        parts, text = [], []
        for axis, (lo, hi) in (("n", (4000, 10000)), ("privacy", (0.5, 10.0))):
            a, sa = _cell_mean(mx, model, method, stat, **{axis: lo})
            b, sb = _cell_mean(mx, model, method, stat, **{axis: hi})
            rel, se = (b - a) / a, float(np.hypot(sa, sb)) / a
            parts.append(decide(tolerance - abs(rel), 0.0, se))
            text.append(f"{NAMES[stat]} {axis}={lo:g}: {_f(a)} -> {hi:g}: {_f(b)} "
                        f"(change {rel:+.1%})")
        return ClaimResult(all_of(*parts), "; ".join(text) + f" (within ±{tolerance:.0%})")
    return check


def _claims() -> list[Claim]:
    out = []
    m1, m2 = MODELS["M1"], MODELS["M2"]
    for tag, pb in PB.items():
        dp = ("STEPS", "UH-mod", pb)
        out += [
            Claim(f"m1_privbayes_best_bias_cp_pred_{tag}",
                  "Model 1: PrivBayes is best on bias, CP and prediction RMSE (§4.1, Fig 2)",
                  _extreme(m1, pb, ("STEPS", "UH-mod"), ("abs_bias", "cp_gap", "pred_rmse")),
                  dp),
            Claim(f"m1_privbayes_worst_rmse_{tag}",
                  "Model 1: PrivBayes is worst on parameter RMSE (§4.1)",
                  _extreme(m1, pb, ("STEPS", "UH-mod"), ("rmse",), best=False), dp),
            Claim(f"m1_steps_best_rmse_{tag}", "Model 1: STEPS is best on parameter RMSE (§4.1)",
                  _extreme(m1, "STEPS", ("UH-mod", pb), ("rmse",)), dp),
            Claim(f"m1_uh_worst_bias_cp_pred_{tag}",
                  "Model 1: UH-mod is worst on bias, CP and prediction RMSE (§4.1)",
                  _extreme(m1, "UH-mod", ("STEPS", pb), ("abs_bias", "cp_gap", "pred_rmse"),
                           best=False), dp),
            Claim(f"m1_privbayes_cp_drifts_with_eps_{tag}",
                  "Model 1: PrivBayes's CP moves further from 95% as ε grows, at both n (§4.1)",
                  _cp_drifts(m1, pb), (pb,)),
            Claim(f"m2_steps_best_{tag}",
                  "Model 2: STEPS is best overall (here: parameter and prediction RMSE) (§4.1)",
                  _extreme(m2, "STEPS", ("UH-mod", pb), ("rmse", "pred_rmse")), dp),
            Claim(f"m2_privbayes_worst_rmse_{tag}",
                  "Model 2: PrivBayes is worst on parameter RMSE (§4.1, Fig 3)",
                  _extreme(m2, pb, ("STEPS", "UH-mod"), ("rmse",), best=False), dp),
            Claim(f"m2_privbayes_no_trend_{tag}",
                  "Model 2: PrivBayes shows no clear trend in n or ε (parameter RMSE) (§4.1)",
                  _no_trend(m2, pb), (pb,)),
        ]
    out += [
        Claim("m1_improves_with_n", "Model 1: inference improves as n grows (RMSE) (§4.1)",
              _improves(m1, ("STEPS", "UH-mod"), ("rmse",), "n"), ("STEPS", "UH-mod")),
        Claim("m1_improves_with_eps", "Model 1: inference improves as ε grows (RMSE) (§4.1)",
              _improves(m1, ("STEPS", "UH-mod"), ("rmse",), "privacy"), ("STEPS", "UH-mod")),
        Claim("m2_uh_worst_cp_pred",
              "Model 2: UH-mod is worst on CP and prediction RMSE (§4.1)",
              _extreme(m2, "UH-mod", ("STEPS", "PrivBayes-DS2019"), ("cp_gap", "pred_rmse"),
                       best=False), ("STEPS", "UH-mod", "PrivBayes-DS2019")),
        Claim("m2_steps_improves_with_n_eps",
              "Model 2: STEPS improves with n and ε (RMSE) (§4.1)",
              lambda mx: ClaimResult(all_of(
                  _improves(m2, ("STEPS",), ("rmse",), "n")(mx).verdict,
                  _improves(m2, ("STEPS",), ("rmse",), "privacy")(mx).verdict),
                  _improves(m2, ("STEPS",), ("rmse",), "n")(mx).evidence + "; "
                  + _improves(m2, ("STEPS",), ("rmse",), "privacy")(mx).evidence),
              ("STEPS",)),
        Claim("m2_uh_improves_with_n", "Model 2: UH-mod improves with n (RMSE) (§4.1)",
              _improves(m2, ("UH-mod",), ("rmse",), "n"), ("UH-mod",)),
    ]
    return out


CLAIMS = _claims()
