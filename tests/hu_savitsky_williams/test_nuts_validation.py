"""The NUTS-vs-conjugate computation of the report (experiments/hu_savitsky_williams/
nuts_validation.py), on its exact-engine path only (cheap): one sample, the tuned fit hits Δ,
and the agreement, parameter and cell tables are built with the conjugate engine as their
reference. (The NUTS engine itself is tested in tests/harness/models/test_survey_nuts.py.)"""

import numpy as np

from experiments.hu_savitsky_williams import nuts_validation as v
from experiments.hu_savitsky_williams.paper import PAPER


def test_conjugate_path_of_the_validation_builds_its_tables():
    settings = dict(v.SETTINGS, draws=200, groups=4,
                    engines={"fbs": ("conjugate",), "fbp": ("conjugate",)})
    batch = v.validation_sample(settings)
    assert batch.values.shape == (1, 1000, 3)
    r = v.run_model("fbp", batch, settings)
    assert 1.8 - settings["tol"] <= r["bound"]["conjugate"] <= 1.8
    rows = {row["quantity"]: row for row in v.summary_rows("fbp", r)}
    assert rows["lipschitz_bound"]["conjugate"] == r["bound"]["conjugate"]
    assert rows["count_ci_ratio_median"]["conjugate"] == 1.0
    assert rows["risk_corr"]["conjugate"] == 1.0 and np.isnan(rows["risk_corr"]["nuts"])
    params = v.compare_parameters("fbp", "weighted", r["weighted"])
    assert [p["parameter"] for p in params][:2] == ["beta[intercept]", "beta[field2]"]
    assert len(params) == 2 * 9 + 3 and all(p["conjugate_sd"] > 0 for p in params)
    assert v.NAME in PAPER.computations
