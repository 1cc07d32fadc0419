"""Figure 4 of Park & Ghosh (§4.2; spec 001 E1): histograms of charge and age from a PeGS chain
iterated without reset and from PeGS.rs blocks (with reset), both at α = 1/expm1(10/13) =
0.8635, the α of the PeGS.rs cell at ε = 1 per sample (spec E1 [RES]; the paper states neither
ε nor the number of iterations): 100 seeds from the original rows, T sweeps each, every sweep
kept. One PeGS sweep at this α costs 10, so T sweeps of the plain chain cost 10·T per seed,
while a PeGS.rs block of T sweeps costs 10 (spec §1.6).

The paper's shape: the PeGS.rs samples are "more uniformly distributed" than the plain
chain's, which stays closer to the original; spec E1 turns it into the check that the total
variation distance to uniform is smaller for PeGS.rs, with a gap that grows with T."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from harness.data import Original
from harness.synthesizers import make_synthesizer
from harness.synthesizers.pegs import alpha_for

from ..data import CARDINALITIES, COL, LEVELS, ORDER, standin_discharge
from .study import ParkGhoshMaps

SWEEPS = (10, 50, 100)  # T: spec E1, 10 and the sensitivity runs 50 and 100
N_SEEDS = 100
ALPHA_BLOCK_EPSILON = 10.0  # ε of one sweep at the shared α (= ε′·B with ε′ = 1, B = 10)
SHOWN = ("charge", "age.yrs")


@functools.lru_cache(maxsize=2)
def chains(n: int = 200_000, seed: int = 1312) -> dict:
    """{"original": codes (n, 13), (T, reset): states (T·100, 13)} for every T of ``SWEEPS``,
    from one stand-in data set with the study's public-sample hash structure."""
    rng = np.random.default_rng(seed)
    train = standin_discharge(n, rng)
    public = standin_discharge(20_000, rng)
    original = Original(ParkGhoshMaps._batch(train[None].astype(float)),
                        {"public": ParkGhoshMaps._batch(public[None].astype(float))})
    model = make_synthesizer("pegs", structure="public").fit(original.train, original.parts)
    probs = model.conditionals(alpha_for(ALPHA_BLOCK_EPSILON, len(ORDER)))
    seeds = train[rng.choice(n, size=N_SEEDS, replace=False)]
    rep = np.zeros(N_SEEDS, dtype=np.int64)
    out = {"original": train}
    for t in SWEEPS:
        for reset in (False, True):
            states, _ = model.run(seeds, rep, probs, t, rng, reset=reset)
            out[t, reset] = states.reshape(-1, len(ORDER))
    return out


def _shares(codes: np.ndarray, var: str) -> np.ndarray:
    c = np.bincount(codes[:, COL[var]], minlength=CARDINALITIES[COL[var]])
    return c / c.sum()


def _tvd(p: np.ndarray, q: np.ndarray) -> float:
    return 0.5 * float(np.abs(p - q).sum())


def tvd_table(metrics: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per T and variable: TVD to uniform and to the original marginal of the plain chain and of
    PeGS.rs, and the gap (chain − PeGS.rs) in TVD to uniform."""
    data = chains()
    rows = []
    for t in SWEEPS:
        for var in SHOWN:
            k = CARDINALITIES[COL[var]]
            uniform, orig = np.full(k, 1 / k), _shares(data["original"], var)
            chain, rs = _shares(data[t, False], var), _shares(data[t, True], var)
            rows.append({"T": t, "variable": var,
                         "chain_tvd_uniform": _tvd(chain, uniform),
                         "rs_tvd_uniform": _tvd(rs, uniform),
                         "gap": _tvd(chain, uniform) - _tvd(rs, uniform),
                         "chain_tvd_original": _tvd(chain, orig),
                         "rs_tvd_original": _tvd(rs, orig),
                         "epsilon_chain_per_seed": ALPHA_BLOCK_EPSILON * t,
                         "epsilon_rs_per_seed": ALPHA_BLOCK_EPSILON})
    return pd.DataFrame(rows)


def figure4(metrics: pd.DataFrame | None = None) -> Figure:
    """Histograms (shares per level) of charge and age at T = 10: the original, the plain PeGS
    chain and PeGS.rs."""
    data = chains()
    fig = Figure(figsize=(12, 4.2))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(SHOWN))
    t = SWEEPS[0]
    for ax, var in zip(axes, SHOWN, strict=True):
        x = np.arange(CARDINALITIES[COL[var]])
        for offset, (label, codes) in zip((-0.27, 0.0, 0.27), (
                ("original", data["original"]), (f"PeGS chain ({t} sweeps)", data[t, False]),
                (f"PeGS.rs (B = {t})", data[t, True])), strict=True):
            ax.bar(x + offset, _shares(codes, var), width=0.27, label=label)
        ax.set_xticks(x[::2], [LEVELS[var][i] for i in x[::2]], rotation=90, fontsize=7)
        ax.set_title(f"({'ab'[SHOWN.index(var)]}) {var}")
        ax.set_ylabel("share")
    axes[0].legend(frameon=False, fontsize=8)
    fig.suptitle(f"Park & Ghosh Figure 4: {N_SEEDS} seeds × {t} sweeps at α = "
                 f"{alpha_for(ALPHA_BLOCK_EPSILON, len(ORDER)):.4f}")
    fig.subplots_adjust(bottom=0.22, top=0.86, wspace=0.2, left=0.06, right=0.99)
    return fig
