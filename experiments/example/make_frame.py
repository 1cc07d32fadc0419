"""How ``data/frame.csv`` was made (kept for transparency; the study reads the CSV): a synthetic
population frame of 400 rows, each standing for ``weight`` people, with a stratum, an outcome
level and an age. East has no "high" outcome: a structural zero of the schema."""

from __future__ import annotations

import numpy as np
import pandas as pd

SHARES = {"north": 0.40, "south": 0.35, "east": 0.25}
OUTCOME = {"north": (0.5, 0.3, 0.2), "south": (0.3, 0.4, 0.3), "east": (0.7, 0.3, 0.0)}


def make_frame(seed: int = 20261124, rows: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strata = rng.choice(list(SHARES), size=rows, p=list(SHARES.values()))
    y = [rng.choice(["low", "mid", "high"], p=OUTCOME[s]) for s in strata]
    age = rng.integers(18, 91, size=rows)
    weight = rng.integers(1, 31, size=rows)
    return pd.DataFrame({"stratum": strata, "y": y, "age": age, "weight": weight})


if __name__ == "__main__":
    make_frame().to_csv("experiments/example/data/frame.csv", index=False)
