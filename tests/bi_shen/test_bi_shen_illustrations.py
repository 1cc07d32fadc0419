"""The data of the paper's Figures 1 and 2 (experiments/bi_shen/illustrations.py), made by the
harness's DIP: every stage of Figure 1 has its law (so Z̃ has F's), V = Z − U has the two flat
pieces 1 − P1 and P1 and F_V = F on the support; the figures draw from the tables alone."""

import numpy as np
import pytest
from scipy import stats

from experiments.bi_shen import cube
from experiments.bi_shen import illustrations as ill
from experiments.bi_shen.paper import PAPER
from harness.privacy.ledger import PrivacyLedger
from harness.synthesizers.dip import known_stages, privatize_known
from harness.synthesizers.dip_transform import uniform_laplace_cdf

#: a bin's count more than this many binomial SEs from its exact expectation fails (the tables
#: have fewer than 200 bins: a correct DIP passes all of them with probability > 0.98)
Z_BIN = 4.0


@pytest.fixture(scope="module")
def tables():
    return ill.make_tables(log=lambda *_: None)


def _within_binomial_se(counts, n, prob):
    se = np.sqrt(n * prob * (1 - prob))
    return np.abs(counts - n * prob) <= Z_BIN * np.maximum(se, 1.0)


def test_every_stage_of_figure_1_has_its_law_so_the_release_has_f(tables):
    """KS at n = 5000 (SETTINGS): F⁻¹ of the noisy uniform without G, or G at the wrong scale,
    moves the release's law by far more than the 1 % critical distance (~0.023)."""
    ks = tables["flowchart_ks"].set_index("stage")
    print(ks.to_string())
    assert (ks["n"] == ill.SETTINGS["n"]).all()
    assert (ks["p_value"] > 0.01).all()
    hist = tables["flowchart_hist"]
    n = ill.SETTINGS["n"]
    width = hist["bin_right"] - hist["bin_left"]
    prob = hist["exact_density"] * width
    assert _within_binomial_se(hist["count"], n, prob).all()


def test_the_stages_are_the_release_that_the_studies_make():
    """known_stages is privatize_known's column step: the same draws give the same release."""
    dist = stats.expon()
    z = dist.rvs(size=(1, 300, 1), random_state=np.random.default_rng(1))
    st = known_stages(dist, z[..., 0], 1.0, np.random.default_rng(2), PrivacyLedger())
    out = privatize_known(z, dist, 1.0, np.random.default_rng(2), PrivacyLedger(),
                          np.zeros((1, 1), dtype=int))
    np.testing.assert_array_equal(st.released, out[..., 0])
    np.testing.assert_array_equal(st.u, dist.cdf(z[..., 0]))
    g = uniform_laplace_cdf(st.noisy, 1.0)
    np.testing.assert_allclose(st.released, dist.ppf(g), rtol=1e-9)


def test_v_has_two_flat_pieces_and_integrates_to_one(tables):
    pmf = tables["bernoulli_pmf"].set_index("value")
    p1 = pmf.loc[1.0, "pmf"]
    assert p1 == ill._distribution(ill.SETTINGS["bernoulli"]).pmf(1)  # S1's Bernoulli
    d = tables["bernoulli_density"]
    width = d["bin_right"] - d["bin_left"]
    mid = (d["bin_left"] + d["bin_right"]) / 2
    assert np.isclose((d["exact_density"] * width).sum(), 1.0)
    assert np.isclose((d["density"] * width).sum(), 1.0)  # every V lies in (−1, 1]
    expected = np.where((mid > -1) & (mid < 0), 1 - p1, np.where((mid > 0) & (mid < 1), p1, 0))
    np.testing.assert_allclose(d["exact_density"], expected, atol=1e-12)
    assert _within_binomial_se(d["count"], pmf["n"].iloc[0], d["exact_density"] * width).all()


def test_cdf_of_v_equals_f_on_the_support_and_is_linear_between(tables):
    c = tables["bernoulli_cdf"]
    on = np.isclose(c["x"], np.round(c["x"])) & (c["x"] >= 0) & (c["x"] <= 1)
    assert on.sum() == 2
    # exactly, for the law and for the sample: V ≤ k iff Z ≤ k at every integer k
    np.testing.assert_array_equal(c.loc[on, "cdf_v"], c.loc[on, "cdf_z"])
    np.testing.assert_array_equal(c.loc[on, "ecdf_v"], c.loc[on, "ecdf_z"])
    inside = (c["x"] > -1) & (c["x"] < 1)
    slopes = np.diff(c.loc[inside, "cdf_v"]) / np.diff(c.loc[inside, "x"])
    pmf = tables["bernoulli_pmf"].set_index("value")["pmf"]
    x = c.loc[inside, "x"].to_numpy()[1:]
    np.testing.assert_allclose(slopes, np.where(x <= 0, pmf[0.0], pmf[1.0]), rtol=1e-3,
                               atol=1e-3)
    # DKW at 99 %: the sample V's ECDF lies in the band around the exact F_V
    n = tables["bernoulli_pmf"]["n"].iloc[0]
    assert np.abs(c["ecdf_v"] - c["cdf_v"]).max() <= np.sqrt(np.log(2 / 0.01) / (2 * n))


def test_the_dip_release_keeps_the_bernoulli(tables):
    pmf = tables["bernoulli_pmf"]
    n = pmf["n"].iloc[0]
    assert np.isclose(pmf["privatized_share"].sum(), 1.0)
    assert _within_binomial_se(pmf["privatized_share"] * n, n, pmf["pmf"]).all()


def test_figures_draw_from_the_tables_with_legends_and_are_registered(tables):
    c = PAPER.computations[ill.NAME]
    assert c.make is ill.make_tables and c.settings == ill.SETTINGS
    assert set(c.figures) == {"figure_1_flowchart", "figure_2_continualization", "figure_cube"}
    figs = {name: draw(tables) for name, draw in c.figures.items()}
    for fig in figs.values():
        for ax in fig.axes:
            assert ax.get_legend() is not None and ax.get_xlabel()
    stages = figs["figure_1_flowchart"].axes
    assert [p.get_facecolor()[:3] for p in (stages[0].patches[0], stages[3].patches[0])] == [
        pytest.approx((0.839, 0.153, 0.157), abs=1e-3),  # red: non-private
        pytest.approx((0.173, 0.627, 0.173), abs=1e-3)]  # green: private


def test_the_committed_tables_are_what_the_code_makes(tables):
    """The report's figures are drawn from the committed tables (harness report --figures):
    they must be this seed's, so a change of DIP that moves them shows here."""
    import pandas as pd

    from harness.report import report_dir

    out = report_dir("bi_shen") / ill.NAME / "tables"
    assert sorted(p.stem for p in out.glob("*.csv")) == sorted(tables)
    for name, table in tables.items():
        pd.testing.assert_frame_equal(pd.read_csv(out / f"{name}.csv"), table,
                                      check_dtype=False, rtol=1e-12)


def test_the_cube_illustration_has_the_papers_values_and_dips_conditional(tables):
    """App. S1.6: F̂ and Ĉ at the paper's two points exactly; the release (law Ĉ) near Ĉ; every
    released record with x1 in (d12, d13] has x2 uniform on (d24, d25] (the privatized row's
    cell: a DIP that took the original record's cell would put x2 elsewhere)."""
    cells = tables["cube_cells"]
    assert (cells["hi1"] == cells["x1"]).all() and (cells["hi2"] == cells["x2"]).all()
    v = tables["cube_values"]
    np.testing.assert_array_equal(v["F_hat"], v["paper_F_hat"])
    np.testing.assert_allclose(v["C_hat"], v["paper_C_hat"], atol=1e-12)
    n = ill.SETTINGS["cube_n"]
    assert _within_binomial_se(v["C_hat_release"] * n, n, v["C_hat"]).all()
    c = tables["cube_conditional"]
    row = cells[cells["rank1"] == cube.GIVEN_RANK].iloc[0]
    assert (c["lo2"] == row["lo2"]).all() and row["hi2"] == cells["hi2"].max()
    assert (c.loc[c["x2"] <= row["lo2"], "ecdf"] == 0).all() and c["ecdf"].iloc[-1] == 1
    band = np.sqrt(np.log(2 / 0.01) / (2 * c["records"].iloc[0]))  # DKW, 99 %
    assert np.abs(c["ecdf"] - c["cdf"]).max() <= band
    rel = tables["cube_release"].to_numpy()
    inside = [((rel[:, 0] > r.lo1) & (rel[:, 0] <= r.hi1) & (rel[:, 1] > r.lo2)
               & (rel[:, 1] <= r.hi2)) for r in cells.itertuples()]
    assert (np.sum(inside, axis=0) == 1).all()  # every released record in exactly one cell
