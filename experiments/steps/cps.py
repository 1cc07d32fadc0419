"""The 2000–2012 CPS youth-voter subset (Bowen, Liu & Su §4.2, Table 1; spec 003 §4.2–§4.3):
its 15-column categorical schema, the stand-in generator ``standin_cps`` and a loader for a
user's CSV of the real file.

The real file (Holbein & Hillygus 2016, Harvard Dataverse) cannot be fetched here. The stand-in
follows spec §4.3 exactly: three latent variables that are not released (SES class Z, region R,
election year T with pres = 1[T even]) and the 15 attributes drawn in the spec's order.
Binary attributes are Bernoulli(logistic(a + lin)); ordinal ones (income, length of residence)
are latent = score + Logistic(0, 1) cut at quantiles that give Table 1's marginal. The
intercepts ``a`` and the cut points are calibrated once, on a fixed large calibration sample
(``CALIBRATION_SEED``, ``CALIBRATION_N``), by bisection on the mean (binary) and by the target
quantiles of the latent (ordinal); after calibration every record is drawn iid from one fixed
model, so the stand-in is a proper population model, not a sample-matched one. [ours: the spec
does not say whether its prototype calibrated per sample or once.] ``dmv`` has no free
intercept (its probability is the spec's product formula); ``voted`` is 0 for unregistered
records (the structural zero) and otherwise calibrated to P(voted | registered) = .347/.524.

Codes (spec §4.3): binary 0 = no / 1 = yes; age 0..4 for 18..22; income 0..13 (ordered);
length of residence 0..5 in Table 1's order. In the linear predictors ``age``, ``income`` and
``lor`` enter as these codes. [ours: the spec writes "age" without saying code or years; codes
are what ``[−9, −4, −1.5, .6, 1.4][age]`` indexes.]
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import expit

from harness.errors import ConfigError
from harness.schema import Schema, load_csv

#: Table 1's attributes in its order (spec §4.2): name -> levels
LEVELS: dict[str, tuple] = {
    "voted": ("no", "yes"),
    "prereg": ("no", "yes"),
    "age": (18, 19, 20, 21, 22),
    "married": ("no", "yes"),
    "female": ("no", "yes"),
    "income": tuple(range(14)),
    "college": ("no", "yes"),
    "white": ("no", "yes"),
    "hispanic": ("no", "yes"),
    "registered": ("no", "yes"),
    "metro": ("no", "yes"),
    "lor": ("<1 month", "1-6 months", "7-11 months", "1-2 years", "3-4 years", ">=5 years"),
    "bizfarm": ("no", "yes"),
    "inperson": ("no", "yes"),
    "dmv": ("no", "yes"),
}
ORDER: tuple[str, ...] = tuple(LEVELS)
COL = {name: j for j, name in enumerate(ORDER)}
#: the paper's n (§4.2)
N_PAPER = 44_821
#: cells of the full 15-way table (12 binary × 5 × 14 × 6); a quarter are structural zeros
N_CELLS_PAPER_FULL = 1_720_320

#: Table 1's "yes" shares with the spec's typo corrections (§4.2, [T]/[R])
YES_SHARE = {"voted": .347, "prereg": .105, "married": .075, "female": .507, "college": .031,
             "white": .693, "hispanic": .146, "registered": .524, "metro": .779,
             "bizfarm": .126, "inperson": .367, "dmv": .127}
AGE_SHARE = np.array([.205, .197, .200, .200, .198])
#: spec §4.3's income marginal (min 3.1, median 5.9, max 26.5 as Table 1 prints)
INCOME_SHARE = np.array([3.1, 3.4, 3.8, 4.2, 4.8, 5.5, 5.8, 6.0, 6.4, 7.0, 7.5, 8.0, 8.0,
                         26.5]) / 100
LOR_SHARE = np.array([2.7, 20.0, 6.9, 15.0, 9.8, 45.6]) / 100

# --- the generator's fixed structure (spec §4.3) ---------------------------------------------
Z_SHARE = np.array([.3, .3, .25, .15])
R_SHARE = np.array([.5, .3, .2])
N_YEARS = 7
CALIBRATION_SEED = 20200314
CALIBRATION_N = 400_000


def schema() -> Schema:
    """The 15-column categorical schema in Table 1's order, with the structural zero
    voted = yes & registered = no (spec §2.3, A7)."""
    return Schema.from_config({
        "columns": [{"name": n, "levels": list(v)} for n, v in LEVELS.items()],
        "structural_zeros": [{"voted": "yes", "registered": "no"}]}, "steps_cps.schema")


def _draw(p: np.ndarray, rng) -> np.ndarray:
    return (rng.random(p.shape) < p).astype(np.int64)


def _categorical(share: np.ndarray, n: int, rng) -> np.ndarray:
    return np.searchsorted(np.cumsum(share), rng.random(n) * share.sum(), side="right")


def _intercept(lin: np.ndarray, target: float) -> float:
    """The a with mean(logistic(a + lin)) = target (spec §4.3 says bisection; Newton's method
    on this increasing, convex-concave function reaches the same root to 1e-12 in a few steps)."""
    a = float(np.log(target / (1 - target)) - lin.mean())
    for _ in range(50):
        p = expit(a + lin)
        step = (p.mean() - target) / max((p * (1 - p)).mean(), 1e-12)
        a -= step
        if abs(step) < 1e-12:
            break
    return a


class _Calibration:
    """Intercepts and cut points: solved on the calibration sample (``fixed`` empty) or
    read from a finished calibration."""

    def __init__(self, fixed: dict | None = None):
        self.fixed = fixed
        self.found: dict = {}

    def binary(self, name, lin, target, rng):
        a = self.fixed[name] if self.fixed else _intercept(lin, target)
        self.found[name] = a
        return _draw(expit(a + lin), rng)

    def ordinal(self, name, score, share, rng):
        latent = score + rng.logistic(size=score.shape)
        if self.fixed:
            cuts = self.fixed[name]
        else:
            cuts = np.quantile(latent, np.cumsum(share)[:-1])
        self.found[name] = cuts
        return np.searchsorted(cuts, latent, side="right").astype(np.int64)


def _generate(n: int, rng, cal: _Calibration) -> np.ndarray:
    """Spec §4.3's generation order 1–15 (the latent Z, R, T first)."""
    z = _categorical(Z_SHARE, n, rng)
    r = _categorical(R_SHARE, n, rng)
    t = rng.integers(0, N_YEARS, n)
    pres = (t % 2 == 0).astype(np.int64)
    by_r = lambda vals: np.asarray(vals)[r]  # noqa: E731  ([u0, u1, u2][R])
    age = _categorical(AGE_SHARE, n, rng)
    female = _draw(np.full(n, YES_SHARE["female"]), rng)
    prereg = cal.binary("prereg", by_r([0, 1.0, -.8]) + .2 * t + .15 * z,
                        YES_SHARE["prereg"], rng)
    white = cal.binary("white", by_r([.4, -.6, .3]) + .3 * z - .06 * t, YES_SHARE["white"], rng)
    hispanic = cal.binary("hispanic", by_r([-.6, .9, .1]) - .3 * z - .4 * white + .06 * t,
                          YES_SHARE["hispanic"], rng)
    metro = cal.binary("metro", by_r([0, .6, -.8]) + .25 * z + .05 * age,
                       YES_SHARE["metro"], rng)
    married = cal.binary("married", .45 * age - .35 * z + .3 * female - .05 * t - .3 * metro
                         + by_r([0, -.2, .4]) + .4 * hispanic - .2 * white,
                         YES_SHARE["married"], rng)
    college = cal.binary("college", np.array([-9, -4, -1.5, .6, 1.4])[age] + .7 * z
                         + .3 * female + .3 * metro, YES_SHARE["college"], rng)
    income = cal.ordinal("income", .9 * z + .6 * married + .6 * college + .1 * age + .3 * white
                         + .05 * t + .3 * metro, INCOME_SHARE, rng)
    lor = cal.ordinal("lor", -.25 * age - .6 * married + .25 * z - .2 * metro, LOR_SHARE, rng)
    bizfarm = cal.binary("bizfarm", -.7 * metro + .35 * z + .15 * lor + .1 * age + .3 * married
                         + by_r([0, -.3, .4]), YES_SHARE["bizfarm"], rng)
    inperson = cal.binary("inperson", -.12 * lor + .3 * (r == 2) - .1 * t - .2 * metro + .15 * z
                          - .08 * age + .2 * bizfarm - .3 * college - .15 * hispanic,
                          YES_SHARE["inperson"], rng)
    registered = cal.binary("registered", .25 * age + 1.2 * college + .08 * income + .35 * z
                            + .3 * white - .4 * hispanic + .12 * lor + .35 * prereg
                            + .15 * female + .2 * married + .5 * pres + .15 * inperson,
                            YES_SHARE["registered"], rng)
    p_dmv = (np.where(registered == 1, .22, .025) * np.exp(.05 * (t - 3))
             * np.where(metro == 1, 1.1, .7) * np.where(inperson == 1, 1.2, .9)
             * np.where(bizfarm == 1, .8, 1.0))
    dmv = _draw(p_dmv, rng)
    lin_v = (.5 * college + .05 * income + .2 * z + .2 * prereg + .15 * female + .08 * age
             + .1 * lor + 1.2 * pres + .15 * inperson + .2 * married)
    reg = registered == 1
    a_v = cal.fixed["voted"] if cal.fixed else _intercept(
        lin_v[reg], YES_SHARE["voted"] / YES_SHARE["registered"])
    cal.found["voted"] = a_v
    voted = np.where(reg, _draw(expit(a_v + lin_v), rng), 0)
    cols = {"voted": voted, "prereg": prereg, "age": age, "married": married, "female": female,
            "income": income, "college": college, "white": white, "hispanic": hispanic,
            "registered": registered, "metro": metro, "lor": lor, "bizfarm": bizfarm,
            "inperson": inperson, "dmv": dmv}
    return np.stack([cols[name] for name in ORDER], axis=1).astype(np.int64)


@lru_cache(maxsize=1)
def calibration() -> dict:
    """The stand-in's intercepts and cut points, solved once on ``CALIBRATION_N`` records from
    ``CALIBRATION_SEED`` (deterministic)."""
    cal = _Calibration()
    _generate(CALIBRATION_N, np.random.default_rng(CALIBRATION_SEED), cal)
    return dict(cal.found)


def standin_cps(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` stand-in CPS youth-voter records as codes (n, 15) int64 in :data:`ORDER`, drawn iid
    from spec §4.3's calibrated model with ``rng``."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ConfigError(f"n: must be an integer >= 1, got {n!r}")
    return _generate(int(n), rng, _Calibration(calibration()))


def load_cps_csv(path) -> np.ndarray:
    """A user's CSV of the real CPS subset: the 15 columns of :data:`LEVELS`, coded as its
    level labels (e.g. ``voted`` = no/yes, ``age`` = 18..22); codes (n, 15) in :data:`ORDER`.
    Every problem is one line naming the column; a record that is voted but not registered
    violates the structural zero and is refused."""
    sch = schema()
    codes, _ = load_csv(path, sch, key="study.data_csv")
    bad = (codes[:, COL["voted"]] == 1) & (codes[:, COL["registered"]] == 0)
    if bad.any():
        raise ConfigError(f"study.data_csv: {int(bad.sum())} records have voted = yes and "
                          f"registered = no (a structural zero of the schema)")
    return codes
