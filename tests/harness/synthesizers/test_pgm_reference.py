"""MST against OpenDP's (``opendp.extras.mbi.MST``, the reference implementation) on the same
data at the same ρ (``pgm_reference.py``: n = 2 000, four columns of three levels, ρ = 0.05,
OpenDP's budget split).

OpenDP draws its noise from the operating system and one of its releases costs 15–120 s on
this machine, so its releases are recorded once by ``make_pgm_reference.py`` into
``data/opendp_mst_reference.json`` (per release: the model's mean two-way TVD, the synthetic
data's mean two-way TVD, the noise SDs, the cliques); the test runs ours live (all releases
as the replicates of one vectorised call) and compares:

* the noise SDs of every measurement, which OpenDP finds by binary search from ρ: equal to
  ours to 1e-6 (relative);
* the distribution of the model's and of the synthetic data's mean two-way TVD: a two-sided
  Mann–Whitney test per statistic must not reject at α = 0.01 (Bonferroni over the two),
  and the planted bug (our noise × 2, ledger unchanged) must be rejected at 1e-4 on the
  model's TVD; the same on MST's junction-tree path (its releases above ``dense_cells``;
  20 releases, fitted one after another: against OpenDP's 40, a planted bug whose releases
  all lie beyond OpenDP's gives Mann–Whitney p ≈ 4e-10, and noise × 2 nearly does (its model
  TVD 0.021 against OpenDP's 0.013 ± 0.002): p = 4.7e-12 with 30 releases, whose full
  separation would be 1e-12, so 20 keep the control orders of magnitude below 1e-4).

Null rows: OpenDP adds a null key to every column (a fourth level here), its model may put
mass there and its sampler (``synthetic_data(n, "sample")``) may draw it. The asserted
comparison leaves null mass and null rows out (the K × K public cells of each table,
renormalised), since our mechanism has no null level; the same statistics with null counted
as error (the truth's null cells zero) are printed beside them, with OpenDP's number of null
rows per release: null mass makes OpenDP's releases worse by about its share.
"""

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pgm_reference as ref
import pytest
from noise_helpers import scaled_noise
from scipy.stats import mannwhitneyu

from harness.privacy import PrivacyLedger
from harness.synthesizers import pgm
from harness.synthesizers.pgm_model import Estimation, sample_joint

pytest.importorskip("mbi")

RECORDED = Path(__file__).parent / "data" / "opendp_mst_reference.json"
OURS = 60  # releases of ours (one vectorised call)
OURS_TREE = 20  # on the junction-tree path (fitted one after another)


def our_tables(seed: int, dense: bool = True) -> tuple[list, list, PrivacyLedger]:
    """OURS releases of MST on the reference data (one vectorised call; ``dense`` False: the
    junction-tree path, replicate by replicate): per release the model's and the synthetic
    data's two-way tables of every pair."""
    codes = ref.reference_codes()
    count = OURS if dense else OURS_TREE
    batch = np.repeat(codes[None], count, axis=0)
    cards = np.full(len(ref.COLUMNS), ref.LEVELS)
    ledger = PrivacyLedger(zcdp_delta=1e-5)
    rng = np.random.default_rng(seed)
    fit = pgm.mst(batch, cards, ref.RHO, "add/remove", rng, ledger,
                  oneway_split=ref.ONEWAY_SPLIT, measure_split=ref.MEASURE_SPLIT,
                  settings=Estimation(), dense=dense)
    synthetic = sample_joint(fit.joint, ref.N, rng)[:, 0] if dense else \
        fit.sample(ref.N, rng)[:, 0]
    pairs = list(combinations(range(len(ref.COLUMNS)), 2))
    model = [[fit.marginal(p)[i].reshape(ref.LEVELS, ref.LEVELS) for p in pairs]
             for i in range(count)]
    synth = [[ref.pair_table(synthetic[i], a, b) for a, b in pairs] for i in range(count)]
    return model, synth, ledger


def errors(releases, drop_null: bool) -> np.ndarray:
    codes = ref.reference_codes()
    return np.array([ref.mean_tvd(tables, codes, drop_null) for tables in releases])


@pytest.fixture(scope="module")
def recorded():
    data = json.loads(RECORDED.read_text())
    assert data["rho"] == ref.RHO and data["n"] == ref.N
    return data["releases"]


@pytest.fixture(scope="module")
def ours_dense():
    """Our dense releases (seed 2), made once: the noise SDs are read from their ledger (they
    follow from ρ and the split alone, whatever the seed) and the dense comparison below
    compares their errors."""
    return our_tables(seed=2, dense=True)


def test_noise_scales_equal_opendps(recorded, ours_dense):
    _, _, ledger = ours_dense
    ours = sorted({round(e.scale, 9) for e in ledger.entries if e.mechanism == "gaussian_zcdp"})
    theirs = sorted({round(s, 9) for r in recorded for s in r["stddevs"].values()})
    assert len(ours) == len(theirs) == 2
    assert np.allclose(ours, theirs, rtol=1e-6)
    assert ledger.total_rho() == pytest.approx(ref.RHO, rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dense", [True, False], ids=["dense", "junction_tree"])
def test_errors_match_opendps_in_distribution_and_a_planted_bug_does_not(recorded, request,
                                                                         monkeypatch, dense):
    """Both paths of MST (the dense vmapped fit, and the junction-tree path that MST takes
    above ``dense_cells``) against OpenDP's releases."""
    assert len(recorded) >= 15
    model, synth, _ = (request.getfixturevalue("ours_dense") if dense else
                       our_tables(seed=2, dense=False))
    lines, p = [], {}
    for drop_null in (True, False):
        how = "null left out" if drop_null else "null as error"
        for what, ours, key in (("model", model, "model_tables"),
                                ("synthetic", synth, "synthetic_tables")):
            a = errors(ours, drop_null)
            b = errors([r[key] for r in recorded], drop_null)
            p[what, drop_null] = mannwhitneyu(a, b).pvalue
            lines.append(f"{what} TVD, {how}: ours {a.mean():.4f} ± {a.std():.4f} ({a.size}), "
                         f"OpenDP {b.mean():.4f} ± {b.std():.4f} ({b.size}), "
                         f"p = {p[what, drop_null]:.3g}")
    nulls = np.mean([r["null_rows"] for r in recorded])
    print("\n" + "\n".join(lines) + f"\nOpenDP null rows per release: {nulls:.2f} of {ref.N}")
    # the mechanisms: null mass left out (Bonferroni over the two statistics)
    assert p["model", True] > 0.005 and p["synthetic", True] > 0.005

    monkeypatch.setattr(pgm, "gaussian_zcdp", scaled_noise(pgm.gaussian_zcdp, 2.0))
    bad_model, bad_synth, _ = our_tables(seed=3, dense=dense)
    their = errors([r["model_tables"] for r in recorded], True)
    bad = errors(bad_model, True)
    p_bad = mannwhitneyu(bad, their).pvalue
    p_bad_synth = mannwhitneyu(errors(bad_synth, True),
                               errors([r["synthetic_tables"] for r in recorded], True)).pvalue
    print(f"planted bug (noise × 2): model TVD {bad.mean():.4f}, p = {p_bad:.3g}; synthetic "
          f"p = {p_bad_synth:.3g}")
    assert p_bad < 1e-4
