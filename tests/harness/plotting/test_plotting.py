"""Tests of harness.plotting.figures."""

import numpy as np
import pandas as pd
import pytest

from harness.plotting import metric_facet_figure, save_figure

DP = ("Lap", "Dir", "Beta")
REFS = ("Ori", "MS")
METRIC_NAMES = ("bias", "rmse", "coverage", "width")
LOG_EPS = np.arange(-4, 5, dtype=float)


@pytest.fixture
def table():
    rng = np.random.default_rng(7)
    records = []
    for n in (40, 200):
        for name in METRIC_NAMES:
            for method in DP:
                for le in LOG_EPS:
                    records.append(
                        (n, 0.25, method, float(np.exp(le)), le, name, rng.normal(), 0.01)
                    )
            for k, method in enumerate(REFS):
                records.append(
                    (n, 0.25, method, np.nan, np.nan, name, 0.1 * (k + 1) + n / 1000, 0.02)
                )
    return pd.DataFrame(
        records, columns=["n", "pi", "method", "epsilon", "log_epsilon", "metric", "value", "mcse"]
    ).assign(estimand="pi")


def labelled_lines(ax):
    return {
        line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")
    }


def test_facet_layout_lines_and_references(table):
    fig = metric_facet_figure(table, column_keys=("n", "pi"), methods=DP)
    axes = np.array(fig.axes).reshape(4, 2)
    assert len(fig.axes) == 8
    assert axes[0, 0].get_title() == "n = 40, π = 0.25"
    assert axes[0, 1].get_title() == "n = 200, π = 0.25"
    assert [ax.get_ylabel() for ax in axes[:, 0]] == ["Bias", "RMSE", "95% CP", "95% CI width"]
    for i, name in enumerate(METRIC_NAMES):
        for j, n in enumerate((40, 200)):
            lines = labelled_lines(axes[i, j])
            assert set(lines) == set(DP) | set(REFS)
            for m in DP:
                expected = table[(table.n == n) & (table.metric == name) & (table.method == m)]
                assert np.allclose(lines[m].get_xdata(), LOG_EPS)
                assert np.allclose(lines[m].get_ydata(), expected.sort_values("log_epsilon").value)
            for k, m in enumerate(REFS):
                y = np.asarray(lines[m].get_ydata(), dtype=float)
                assert np.allclose(y, 0.1 * (k + 1) + n / 1000)  # constant: horizontal
                assert lines[m].get_linestyle() != "-"
    assert list(axes[0, 0].get_xticks()) == list(range(-4, 5))
    guides = [line for line in axes[2, 0].get_lines() if line.get_label() == "_guide"]
    assert len(guides) == 1 and np.allclose(guides[0].get_ydata(), 0.95)
    legend_texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend_texts == [*DP, *REFS]


def test_reference_subset_and_no_errorbars(table):
    fig = metric_facet_figure(table, reference_methods=("MS",), errorbars=False, others=False)
    ax = fig.axes[0]
    assert set(labelled_lines(ax)) == set(DP) | {"MS"}
    assert not ax.collections  # no error bars, no reference bands


def test_rejects_several_estimands(table):
    two = pd.concat([table, table.assign(estimand="var")])
    with pytest.raises(ValueError):
        metric_facet_figure(two)


def test_save_figure_writes_png(table, tmp_path):
    fig = metric_facet_figure(table, title="test")
    out = save_figure(fig, tmp_path / "sub" / "dir" / "fig.png")
    data = out.read_bytes()
    assert len(data) > 1000
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["fig.png"]  # no temp file left


def test_a_method_keeps_its_colour_whatever_else_a_figure_shows(table):
    """Stable colours (issue 24 item 1): the palette's for the papers' methods, a hash of the
    name for any other (a plug-in), the same in every figure and process."""
    from matplotlib.colors import to_hex

    from harness.plotting import method_colour
    from harness.plotting.colours import hashed_colour, palette

    assert method_colour("MODIPS") == palette()["MODIPS"] == "#1f77b4"
    assert method_colour("GEO") == hashed_colour("GEO") == "#a14590"  # fixed across runs
    assert method_colour("GEO") not in palette().values()
    plugin = table[table["method"] == "Lap"].assign(method="GEO")
    alone = metric_facet_figure(pd.concat([plugin, table[table["method"] == "Ori"]]))
    both = metric_facet_figure(pd.concat([table, plugin]), methods=("Dir", "Beta"))
    colours = [{m: to_hex(line.get_color()) for m, line in labelled_lines(f.axes[0]).items()}
               for f in (alone, both)]
    assert colours[0]["GEO"] == colours[1]["GEO"] == "#a14590"
    assert colours[0]["Ori"] == colours[1]["Ori"] == "#000000"
    # methods= orders the listed ones; every other method present is drawn after them
    legend = [t.get_text() for t in both.legends[0].get_texts()]
    assert legend == ["Dir", "Beta", "Lap", "GEO", "Ori", "MS"]


def test_methods_to_draw_adds_what_the_figure_does_not_know():
    from harness.plotting import methods_to_draw

    present = ["X", "MD", "LAP", "Ori", "Y"]
    assert methods_to_draw(present, ["LAP", "MD", "BB-MR"], known=["Ori"]) == [
        "LAP", "MD", "X", "Y"]
