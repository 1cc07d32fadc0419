"""Is the exponential-decay gap of Table 1 the network's constant? (report, S4)

Our DIP entropy losses on S4's exponential-decay network, Ω_kl = exp(−2|k − l|) as the appendix
defines it (spec 004 §3 S3), are about half of Table 1's, while the chain network's reproduce.
The CV, the release and the loss are shared by both networks, so the network's definition is the
first suspect. This computation refits S4's DIP cells at ε = 1 on the appendix's rate and on
other rates of the same family Ω_kl = exp(−rate·|k − l|), with S4's own code (data, releases,
grouped 5-fold CV, glasso settings of ``conf/study/bi_shen_s4.yaml`` at ``profile=paper``), for
a few replicates, outside the sweep engine.

Table ``decay_rate``: per rate and method (NP, DIP at each hold-out), the mean entropy loss and
its SD over the replicates, beside Table 1's DIP mean at ε = 1 (NP has none), and the ratio.
A rate whose three DIP cells all sit near the paper's would point at the network; a rate that
matches one cell but not the trend over the hold-out would not.

Seeds derive from the root seed (harness/rng.py, streams named after this computation); every rate
sees its own data (Σ = Ω⁻¹ depends on the rate) from the same data stream."""

from __future__ import annotations

import pandas as pd
from threadpoolctl import threadpool_limits

from harness import config
from harness.data import Original
from harness.engine.study import load_study
from harness.inference.glasso import entropy_loss
from harness.rng import generator

from ..paper_numbers import TABLE_1, TABLE_1_EPSILONS
from ..tables import tidy

NAME = "bi_shen_s4_decay_probe"
SETTINGS = {
    "seed": 0, "N": 200, "p": 250, "epsilon": 1.0, "replicates": 2,
    # the appendix's rate first, then the same family with a slower decay
    "rates": (2.0, 1.5, 1.0),
    "methods": ("NP", "DIP_15", "DIP_25", "DIP_35"),
}


def _study(rate: float):
    cfg = config.load(["study=bi_shen_s4", "profile=paper", f"study.exp_decay.rate={rate}"])
    return load_study(cfg["study"])


def _paper_dip(holdout, epsilon: float) -> float:
    """Table 1's DIP mean on the exponential-decay network at ``holdout`` and ``epsilon``."""
    if holdout is None or ("exp_decay", holdout) not in TABLE_1:
        return float("nan")
    means = dict(zip(TABLE_1_EPSILONS, TABLE_1[("exp_decay", holdout)], strict=True))
    return float(means[epsilon][0]) if epsilon in means else float("nan")


def rate_rows(rate: float, settings, log) -> list[dict]:
    """The ``decay_rate`` rows of one rate: every method's releases of the same replicates."""
    study = _study(rate)
    scenario = {"N": int(settings["N"]), "p": int(settings["p"]), "network": "exp_decay"}
    reps = int(settings["replicates"])
    original = Original.of(study.generate(scenario, generator(settings["seed"], NAME, "data"),
                                         reps))
    omega, seeds = original.part("precision"), original.part("cv_seed")
    rows = []
    for label in settings["methods"]:
        synth = study.method(label, scenario)
        eps = float(settings["epsilon"]) if synth.private else None
        release = synth.release(original.train, eps, generator(settings["seed"], NAME, label))
        loss = entropy_loss(omega[:, None], study.glasso_fit(release.sets.values, seeds)
                            .precision)[0][:, 0]
        holdout = study.roster_entry(label)[1].get("holdout_share")
        paper = _paper_dip(holdout, int(settings["epsilon"]))
        rows.append({"rate": rate, "method": "DIP" if holdout is not None else label,
                     "holdout": holdout, "replicates": reps,
                     "entropy_loss": float(loss.mean()), "sd": float(loss.std(ddof=1)),
                     "paper": paper, "ours_over_paper": float(loss.mean()) / paper})
        log(f"{NAME}: rate {rate} {label} done")
    return rows


def make_tables(settings=SETTINGS, log=print) -> dict[str, pd.DataFrame]:
    """The ``decay_rate`` table (module docstring), on one BLAS thread as the sweep's tasks,
    floats to 5 significant digits."""
    with threadpool_limits(limits=1):
        rows = [r for rate in settings["rates"] for r in rate_rows(float(rate), settings, log)]
    return {"decay_rate": tidy(pd.DataFrame(rows))}


def main() -> None:  # pragma: no cover - a command
    for name, table in make_tables().items():
        print(f"\n{name}\n{table.to_string(index=False)}")


if __name__ == "__main__":  # pragma: no cover
    main()
