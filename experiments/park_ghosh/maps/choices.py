"""The study's key settings as the report states them (issue 25 item 5), read from
``conf/study/park_ghosh_maps.yaml`` and the PMI synthesizer's defaults, so that the report
quotes the config, not a number typed into its prose: the hash head size m and PeGS.rs's
block size B (§3.2–3.3), the size of the original and of the public sample that orders the
hash features, and PMI's fit (rows, solver, λ path, CV and glmnet's convergence threshold, at
profile=paper and at profile=ci)."""

from __future__ import annotations

import pandas as pd
from omegaconf import OmegaConf

from harness.synthesizers import make_synthesizer

from .tables import STUDY_CONFIG

#: profile=ci's overrides of the study (its looser PMI convergence threshold)
CI_PROFILE = STUDY_CONFIG.parents[1] / "study_profile" / "park_ghosh_maps_ci.yaml"

PMI_KEYS = ("fit_n", "backend", "cv_folds", "lambda_rule", "n_lambda", "thresh", "l1_ratio")


def settings() -> dict:
    """setting -> value: the roster's and the study's, PMI's with its synthesizer defaults."""
    cfg = OmegaConf.to_container(OmegaConf.load(STUDY_CONFIG))
    roster = cfg["roster"]
    entry = dict(roster["PMI"])
    pmi = make_synthesizer(entry.pop("synthesizer"), **entry)
    out = {"head_size": roster["PeGS"]["head_size"], "B": roster["PeGS.rs"]["B"],
           "structure": roster["PeGS"]["structure"], "n": cfg["grid"]["n"][0],
           "n_public": cfg["n_public"], "n_out": roster["PeGS"]["n_out"]}
    out.update({f"pmi_{k}": getattr(pmi, k) for k in PMI_KEYS})
    ci = OmegaConf.to_container(OmegaConf.load(CI_PROFILE))
    out["pmi_thresh_ci"] = ci["roster"]["PMI"]["thresh"]
    return out


def choices_tables() -> dict[str, pd.DataFrame]:
    return {"choices": pd.DataFrame([{"setting": k, "value": v}
                                     for k, v in settings().items()])}
