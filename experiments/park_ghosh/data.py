"""The paper's data: the 13-variable discharge schema (Park & Ghosh §4.1, Table 2; spec 001
§2.1), the stand-in generator ``standin_discharge`` (spec §2.2) and a loader for a user's CSV
of the same schema.

The OSHPD 2011 Los Angeles discharge file the paper used is not openly available. The stand-in
draws records by ancestral sampling over the DAG of spec §2.2::

    patzip -> race -> ethncty (also <- patzip)
    age.yrs -> sex
    (age, sex) -> MDC -> cat ; (MDC, age) -> sev ; (age, MDC) -> typ
    (typ, sev, cat, age) -> los ; (los, cat, sev, typ, age) -> charge
    (age, los, sev, typ) -> disp ; (age, race, patzip) -> pay

Nominal nodes: logit(j) = log π[j] + Σ_parents κ·W[v_parent, j] (+ the listed bumps), W iid
N(0, 1) from a fixed parameter seed (``PARAMS_SEED``), drawn in a fixed order. Ordinal nodes
(sev, los, charge on their non-NA levels): logit(j) = log π[j] + η·j/(C'−1) (adjacent-category,
monotone shift). Every parameter is the spec's suggestion; where the spec's REVIEW notes asked
for a decision:

* NA levels are injected missing-completely-at-random after the record is drawn (the children
  use the true value), with the spec's probabilities; the π vectors of sex and ethncty get
  π[NA] = 0 (renormalised) so NA mass is not counted twice.
* race has no NA level: its 1 % "NA" goes to its last, catch-all level ("Unknown").
* charge's η gains τ'_typ = 0.5·τ_typ, so the DAG edge typ → charge is real.
* los and charge get base shapes (``LOS_BASE``, uniform for charge) tilted by exp(−θ·j/(C'−1))
  with θ tuned (``LOS_TILT``, ``CHARGE_TILT``) so that P(los < 10) ≈ 0.5 and P(charge < 20K)
  ≈ 0.5, as the paper states ("almost half").
* The W matrices of nominal nodes are indexed by the true (non-NA) parent levels; sex has no
  W (the spec gives only its Female bump at ages 15-40).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from harness.datafiles import read_table
from harness.errors import ConfigError
from harness.schema import Schema
from harness.synthesizers.gibbs import draw_categorical

# --- schema (Table 2, in sweep order) -------------------------------------------------------

AGE_LEVELS = tuple(str(a) for a in range(0, 80, 5)) + ("80+", "NA")
LOS_LEVELS = tuple(str(d) for d in range(10)) + ("10-30", "30-50", "50-70", "70-90", "90+", "NA")
#: lower edges (K) of the 24 charge bins: 0, 2, 4, 6, 8, then 10..95 by 5, then 100+ (spec §2.1)
CHARGE_EDGES_K = (0, 2, 4, 6, 8) + tuple(range(10, 100, 5)) + (100,)
CHARGE_LEVELS = tuple(f"{e}K" for e in CHARGE_EDGES_K[:-1]) + ("100K+", "NA")
ZIP3 = (900, 902, 903, 904, 905, 906, 907, 908, 910, 911, 912, 913, 915, 917, 918, 935)

LEVELS: dict[str, tuple[str, ...]] = {
    "typ": ("Acute Care", "Skilled Nursing", "Psychiatric", "Chemical Dependency",
            "Physical Rehabilitation", "Other"),
    "age.yrs": AGE_LEVELS,
    "sex": ("Male", "Female", "NA"),
    "ethncty": ("Hispanic", "Non-Hispanic", "Unknown", "NA"),
    "race": ("White", "Black", "Native American", "Asian/Pacific Islander", "Other",
             "Multiracial", "Unknown"),
    "patzip": tuple(f"{z}xx" for z in ZIP3),
    "los": LOS_LEVELS,
    "disp": ("Routine", "Acute Care (same hospital)", "Other Care (same hospital)",
             "Skilled Nursing", "Acute Care (other hospital)", "Other Care (other hospital)",
             "Skilled Nursing (other)", "Residential Care", "Prison/Jail",
             "Against Medical Advice", "Died", "Home Health", "Other"),
    "pay": ("Medicare", "Medi-Cal", "Private", "Workers' Comp", "County Indigent",
            "Other Government", "Other Indigent", "Self Pay", "Other Payer"),
    "charge": CHARGE_LEVELS,
    "MDC": ("Nervous", "Eye", "ENMT", "Respiratory", "Circulatory", "Digestive",
            "Hepatobiliary", "Musculoskeletal", "Skin", "Endocrine", "Kidney",
            "Male Reproductive", "Female Reproductive", "Pregnancy", "Newborn", "Blood",
            "Myeloproliferative", "Infectious", "Mental", "Substance Use", "Injuries", "Burns",
            "Health Status Factors", "Multiple Trauma", "HIV"),
    "sev": ("0", "1", "2"),
    "cat": ("Medical", "Surgical"),
}
ORDER: tuple[str, ...] = tuple(LEVELS)  # the sweep order of Table 2
CARDINALITIES = tuple(len(v) for v in LEVELS.values())
#: ordinal variables (their non-NA levels are in natural order)
ORDINAL = ("age.yrs", "los", "charge", "sev")
#: the NA level of each variable that has one
NA_LEVEL = {"age.yrs": "NA", "sex": "NA", "ethncty": "NA", "los": "NA", "charge": "NA"}

COL = {name: j for j, name in enumerate(ORDER)}


def schema() -> Schema:
    """The 13-column categorical schema in sweep order (harness :class:`Schema`)."""
    return Schema.from_config({"columns": [{"name": n, "levels": list(v)}
                                           for n, v in LEVELS.items()]}, "park_ghosh.schema")


# --- generator parameters (spec §2.2 suggestions; harness choices) ----------------------------

PARAMS_SEED = 20131219
NA_RATE = {"age.yrs": 0.005, "sex": 0.002, "ethncty": 0.01, "race": 0.01, "los": 0.005,
           "charge": 0.01}
RACE_PI = np.array([.45, .10, .01, .14, .25, .04, .01])
ETHN_PI = np.array([.40, .55, .04])  # π[NA] = 0 (REVIEW: NA injected separately)
SEX_PI = np.array([.44, .555])  # π[NA] = 0
SEV_PI = np.array([.5, .35, .15])
TYP_PI = np.array([.85, .06, .05, .015, .015, .01])
TYP_TAU = np.array([0, 2.5, 2.0, 1.5, 2.0, 0.5])
PAY_PI = np.array([.35, .30, .25, .02, .02, .02, .01, .02, .01])
DISP_PI = np.array([.65, .03, .02, .08, .03, .02, .03, .02, .01, .02, .02, .05, .02])
#: base shape of los over its 15 non-NA levels (0..9 days, 10-30, ..., 90+), tilted below
LOS_BASE = np.array([.06, .14, .13, .11, .09, .07, .06, .05, .04, .035, .12, .05, .025, .012,
                     .02])
#: tilts θ (π_j ∝ base_j·exp(−θ·j/(C'−1))) tuned so P(los < 10) ≈ 0.5, P(charge < 20K) ≈ 0.5
LOS_TILT = -0.654
CHARGE_TILT = 5.894
CHARGE_AGE_COEF = 0.01


def _age_pi() -> np.ndarray:
    w = np.array([0.3] * 3 + [0.8] * 5 + [1.0] * 3 + [1.4] * 4 + [1.6])  # bins 5..80
    return np.concatenate([[0.10], 0.90 * w / w.sum()])


def _tilted(base: np.ndarray, theta: float) -> np.ndarray:
    p = base * np.exp(-theta * np.arange(base.size) / (base.size - 1))
    return p / p.sum()


@lru_cache(maxsize=4)
def _params(seed: int = PARAMS_SEED) -> dict[str, np.ndarray]:
    """The generator's fixed random parameters, drawn in a fixed order from ``seed``."""
    g = np.random.default_rng(seed)
    c = dict(zip(ORDER, CARDINALITIES, strict=True))
    w = {}
    w["race|zip"] = g.standard_normal((c["patzip"], c["race"]))
    w["ethn|race"] = g.standard_normal((c["race"], 3))
    w["ethn|zip"] = g.standard_normal((c["patzip"], 3))
    w["mdc_pi"] = g.dirichlet(np.full(c["MDC"], 2.0))
    w["mdc|age"] = g.standard_normal((17, c["MDC"]))
    w["mdc|sex"] = g.standard_normal((2, c["MDC"]))
    w["cat|mdc"] = g.standard_normal((c["MDC"], 2))
    w["sev_u"] = g.standard_normal(c["MDC"])
    w["disp|age"] = g.standard_normal((17, c["disp"]))
    w["disp|los"] = g.standard_normal((15, c["disp"]))
    w["disp|sev"] = g.standard_normal((3, c["disp"]))
    w["disp|typ"] = g.standard_normal((6, c["disp"]))
    w["pay|race"] = g.standard_normal((c["race"], c["pay"]))
    w["pay|zip"] = g.standard_normal((c["patzip"], c["pay"]))
    return w


def _softmax_draw(logits: np.ndarray, rng) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return draw_categorical(z / z.sum(axis=-1, keepdims=True), rng)


def _ordinal_draw(pi: np.ndarray, eta: np.ndarray, rng) -> np.ndarray:
    j = np.arange(pi.size) / (pi.size - 1)
    return _softmax_draw(np.log(pi) + eta[:, None] * j, rng)


def standin_discharge(n: int, rng: np.random.Generator, *, params_seed: int = PARAMS_SEED,
                      los_tilt: float | None = None,
                      charge_tilt: float | None = None) -> np.ndarray:
    """``n`` stand-in discharge records as codes (n, 13) int64 in :data:`ORDER` (spec §2.2),
    drawn by ancestral sampling from ``rng``; the model's fixed parameters come from
    ``params_seed``. Deterministic given both. ``los_tilt``/``charge_tilt`` override the
    tuned tilts (used to tune them)."""
    n = int(n)
    if n < 1:
        raise ConfigError(f"n: must be an integer >= 1, got {n!r}")
    w = _params(params_seed)
    los_t = LOS_TILT if los_tilt is None else los_tilt
    charge_t = CHARGE_TILT if charge_tilt is None else charge_tilt
    zip_pi = (np.arange(16) + 1.0) ** -0.5
    zipc = draw_categorical(np.broadcast_to(zip_pi / zip_pi.sum(), (n, 16)), rng)
    race = _softmax_draw(np.log(RACE_PI) + 1.0 * w["race|zip"][zipc], rng)
    ethn_logit = (np.log(ETHN_PI / ETHN_PI.sum()) + 1.5 * w["ethn|race"][race]
                  + 0.7 * w["ethn|zip"][zipc])
    ethn_logit[:, 0] += 2.0 * (race == 4)  # (race = Other, Hispanic)
    ethn = _softmax_draw(ethn_logit, rng)
    age = draw_categorical(np.broadcast_to(_age_pi(), (n, 17)), rng)
    sex_logit = np.broadcast_to(np.log(SEX_PI / SEX_PI.sum()), (n, 2)).copy()
    fertile = (age >= 3) & (age <= 8)  # ages 15-40
    sex_logit[:, 1] += 1.0 * fertile
    sex = _softmax_draw(sex_logit, rng)
    mdc_logit = np.log(w["mdc_pi"]) + 1.0 * w["mdc|age"][age] + 0.5 * w["mdc|sex"][sex]
    mdc_logit[:, 14] += 5.0 * (age == 0)  # newborn
    mdc_logit[:, 13] += 3.0 * ((sex == 1) & fertile)  # pregnancy
    mdc = _softmax_draw(mdc_logit, rng)
    cat = _softmax_draw(np.log([0.75, 0.25]) + 1.0 * w["cat|mdc"][mdc], rng)
    sev = _ordinal_draw(SEV_PI, 0.08 * age + w["sev_u"][mdc], rng)
    typ_logit = np.broadcast_to(np.log(TYP_PI), (n, 6)).copy()
    typ_logit[:, 2] += 3.0 * (mdc == 18)  # psychiatric care for MDC 19
    typ_logit[:, 3] += 3.0 * (mdc == 19)  # chemical dependency for MDC 20
    typ_logit[:, 1] += 1.0 * (age >= 15)  # skilled nursing at 75+
    typ = _softmax_draw(typ_logit, rng)
    los_eta = 1.2 * sev + 0.8 * cat + 0.02 * age + TYP_TAU[typ]
    los = _ordinal_draw(_tilted(LOS_BASE, los_t), los_eta, rng)
    charge_eta = (4.0 * los / 14 + 1.0 * sev + 1.5 * cat + CHARGE_AGE_COEF * age
                  + 0.5 * TYP_TAU[typ])
    charge = _ordinal_draw(_tilted(np.full(24, 1 / 24), charge_t), charge_eta, rng)
    disp_logit = (np.log(DISP_PI) + 0.8 * (w["disp|age"][age] + w["disp|los"][los]
                                           + w["disp|sev"][sev] + w["disp|typ"][typ]))
    disp_logit[:, 10] += 0.8 * sev + 0.05 * age  # Died
    disp = _softmax_draw(disp_logit, rng)
    pay_logit = np.log(PAY_PI) + 0.5 * (w["pay|race"][race] + w["pay|zip"][zipc])
    pay_logit[:, 0] += np.where(age >= 13, 3.0, -2.0)  # Medicare at 65+
    pay = _softmax_draw(pay_logit, rng)
    cols = {"typ": typ, "age.yrs": age, "sex": sex, "ethncty": ethn, "race": race,
            "patzip": zipc, "los": los, "disp": disp, "pay": pay, "charge": charge,
            "MDC": mdc, "sev": sev, "cat": cat}
    out = np.stack([cols[name] for name in ORDER], axis=1).astype(np.int64)
    for name, rate in NA_RATE.items():  # NA injected completely at random (spec §2.2)
        hit = rng.random(n) < rate
        out[hit, COL[name]] = len(LEVELS[name]) - 1  # NA level, or race's catch-all
    return out


# --- user data -------------------------------------------------------------------------------

def load_discharge_csv(path: str | Path, key: str = "data") -> np.ndarray:
    """Codes (n, 13) int64 in :data:`ORDER` of a user's CSV with exactly the 13 columns of
    :func:`schema` (any column order) and the schema's level labels, read as text ("NA" is a
    level, not a missing value). Unknown or missing columns, unknown levels and empty cells are
    one-line ConfigErrors; nothing is written."""
    frame = read_table(path, key, dtype=str, keep_default_na=False)
    unknown = [c for c in frame.columns if c not in LEVELS]
    if unknown:
        raise ConfigError(f"{key}: unknown column {unknown[0]!r} (allowed: {', '.join(ORDER)})")
    codes = schema().encode(frame, key)
    return codes.astype(np.int64)
