"""The benchmark's data interface (harness/benchmark/interface.py) and its adapter
(harness/synthesizers/tabular.py): round trips per study kind, decoding uniform within a bin,
weights and strata carried, the adapter's privacy accounting."""

import numpy as np
import pytest
from scipy import stats

from harness.benchmark.interface import TabularInterface
from harness.data import CountBatch, RecordBatch
from harness.errors import ConfigError
from harness.schema import Categorical, Numeric, Schema
from harness.synthesizers import make_synthesizer

SCHEMA = Schema((Categorical("g", ("a", "b", "c")), Numeric("x", 0.0, 10.0),
                 Numeric("age", 18.0, 90.0, integer=True)))
BINS = {"x": 10, "age": 8}


def mixed_batch(rng, r=3, n=50, cells=True, strata=True, weights=True) -> RecordBatch:
    values = np.stack([rng.integers(0, 3, (r, n)), rng.uniform(0, 10, (r, n)),
                       rng.integers(18, 91, (r, n))], axis=-1).astype(float)
    return RecordBatch(values, rng.integers(0, 4, (r, n)) if cells else None, 4 if cells else 1,
                       SCHEMA.names, rng.uniform(1, 5, (r, n)) if weights else None,
                       rng.integers(0, 2, (r, n)) if strata else None, SCHEMA)


def test_counts_round_trip_as_cell_codes():
    counts = np.array([[3, 0, 7], [1, 8, 1], [10, 0, 0]])
    data = CountBatch(counts, 10, ("x", "y", "z"))
    face = TabularInterface()
    layout = face.layout(data)
    coded = face.encode(data, layout)
    assert coded.values.shape == (3, 10, 1) and coded.schema.names == ("cell",)
    back = face.decode(coded.with_set_axis(), layout, np.random.default_rng(0))
    assert isinstance(back, CountBatch) and back.levels == ("x", "y", "z")
    np.testing.assert_array_equal(back.counts[:, 0], counts)
    assert back.n == 10


def test_records_round_trip_keeps_codes_bins_cells_strata_and_weights():
    rng = np.random.default_rng(1)
    data = mixed_batch(rng)
    face = TabularInterface(bins=BINS, strata=2)
    layout = face.layout(data)
    coded = face.encode(data, layout)
    assert coded.schema.names == ("cell", "g", "x", "age", "stratum")
    assert all(isinstance(c, Categorical) for c in coded.schema.columns)
    np.testing.assert_array_equal(coded.weights, data.weights)  # carried to the method
    back = face.decode(coded.with_set_axis(), layout, np.random.default_rng(2))
    assert back.values.shape == (3, 1, 50, 3) and back.schema is SCHEMA
    np.testing.assert_array_equal(back.cells[:, 0], data.cells)
    np.testing.assert_array_equal(back.strata[:, 0], data.strata)
    np.testing.assert_array_equal(back.weights[:, 0], data.weights)
    np.testing.assert_array_equal(back.values[:, 0, :, 0], data.values[..., 0])
    # each numeric value comes back inside its own bin (x: width 1)
    np.testing.assert_array_equal(np.floor(back.values[:, 0, :, 1]),
                                  np.minimum(np.floor(data.values[..., 1]), 9))
    age = back.values[..., 2]
    assert np.all(age == np.round(age)) and age.min() >= 18 and age.max() <= 90
    assert np.all(np.abs(age[:, 0] - data.values[..., 2]) <= 9 + 1)  # one bin of age is 9


def test_a_method_that_releases_no_weights_gets_weight_one():
    data = mixed_batch(np.random.default_rng(3), cells=False, strata=False)
    face = TabularInterface(bins=BINS)
    layout = face.layout(data)
    coded = face.encode(data, layout)
    unweighted = RecordBatch(coded.values, columns=coded.columns, schema=coded.schema)
    back = face.decode(unweighted.with_set_axis(), layout, np.random.default_rng(0))
    np.testing.assert_array_equal(back.weights, np.ones((3, 1, 50)))


def test_decoding_is_uniform_within_the_bin():
    schema = Schema((Numeric("x", 0.0, 10.0),))
    face = TabularInterface(bins={"x": 10}, schema=schema)
    data = RecordBatch(np.full((1, 20_000, 1), 3.2), columns=("x",))
    layout = face.layout(data)
    coded = face.encode(data, layout)
    assert np.all(coded.values == 3)
    x = face.decode(coded.with_set_axis(), layout, np.random.default_rng(4)).values.ravel()
    assert x.min() >= 3 and x.max() < 4
    assert stats.kstest(x - 3, "uniform").pvalue > 1e-3  # not the bin centre, not skewed


def test_values_outside_declared_bounds_fall_in_edge_bins():
    face = TabularInterface(bins={"x": 4}, bounds={"x": (0.0, 4.0)},
                            schema=Schema((Numeric("x", -100.0, 100.0),)))
    data = RecordBatch(np.array([[[-50.0], [0.5], [3.5], [60.0]]]), columns=("x",))
    np.testing.assert_array_equal(face.encode(data).values.ravel(), [0, 0, 3, 3])


def test_records_keeps_the_first_n_released_records():
    data = mixed_batch(np.random.default_rng(5), cells=False, strata=False, weights=False)
    face = TabularInterface(bins=BINS, records=20)
    layout = face.layout(data)
    back = face.decode(face.encode(data, layout).with_set_axis(), layout,
                       np.random.default_rng(0))
    assert back.n == 20


def test_bounds_by_grid_value_and_bad_interfaces_are_one_line_errors():
    spec = {"columns": [{"name": "z", "bounds": [0, 100]}], "bins": {"z": 5},
            "bounds_by": {"dist": {"a": {"z": [0, 1]}, "b": {"z": [0, 8]}}}}
    assert TabularInterface.from_config(spec, scenario={"dist": "b"}).bounds == {"z": (0.0, 8.0)}
    with pytest.raises(ConfigError, match="bounds_by.dist: no bounds for dist=c"):
        TabularInterface.from_config(spec, scenario={"dist": "c"})
    with pytest.raises(ConfigError, match="interface.binz: unknown key"):
        TabularInterface.from_config({"binz": {}})
    data = RecordBatch(np.zeros((1, 5, 1)), columns=("x",))
    with pytest.raises(ConfigError, match="carry no schema"):
        TabularInterface().layout(data)
    with pytest.raises(ConfigError, match="bins.x: give the number of bins"):
        TabularInterface(schema=Schema((Numeric("x", 0.0, 1.0),))).layout(data)


def test_adapter_releases_at_epsilon_per_privacy_unit_and_decodes():
    data = mixed_batch(np.random.default_rng(6), r=2, n=200)
    synth = make_synthesizer("tabular", inner={"synthesizer": "privbayes", "m": 2},
                             interface=TabularInterface(bins=BINS, strata=2),
                             privacy_parameter="lipschitz_bound", epsilon_per_privacy=2.0)
    assert synth.privacy_parameter == "lipschitz_bound" and synth.m == 2
    rel = synth.release(data, 0.5, np.random.default_rng(7))
    assert rel.privacy == 0.5 and rel.epsilon == 1.0
    assert rel.ledger.total_epsilon() == pytest.approx(1.0)
    assert rel.realised_epsilon(1) == pytest.approx(0.5)  # one of two sets
    assert isinstance(rel.sets, RecordBatch) and rel.sets.values.shape == (2, 2, 200, 3)
    assert rel.sets.cells.max() < 4 and set(np.unique(rel.sets.strata)) <= {0, 1}
    np.testing.assert_array_equal(rel.sets.weights, 1.0)  # PrivBayes ignores the weights
    again = synth.release(data, 0.5, np.random.default_rng(7))
    np.testing.assert_array_equal(rel.sets.values, again.sets.values)


def test_adapter_refuses_a_method_that_does_not_take_coded_records():
    with pytest.raises(ConfigError, match="laplace_sanitizer takes 'categorical' data"):
        make_synthesizer("tabular", inner={"synthesizer": "laplace_sanitizer"})
    with pytest.raises(ConfigError, match="inner: give the wrapped synthesizer"):
        make_synthesizer("tabular")


def test_levels_code_the_nearest_public_value_and_decode_it_exactly():
    face = TabularInterface(levels={"r": (0.5, 1.0, 1.5)},
                            schema=Schema((Numeric("r", 0.5, 1.5), Categorical("g", (0, 1)))))
    data = RecordBatch(np.array([[[0.5, 1], [1.5, 0], [1.0, 1], [9.0, 0]]]), columns=("r", "g"))
    layout = face.layout(data)
    coded = face.encode(data, layout)
    assert coded.schema.column("r").levels == (0, 1, 2)
    np.testing.assert_array_equal(coded.values[0, :, 0], [0, 2, 1, 2])  # 9 → the top level
    back = face.decode(coded.with_set_axis(), layout, np.random.default_rng(0))
    np.testing.assert_array_equal(back.values[0, 0], [[0.5, 1], [1.5, 0], [1.0, 1], [1.5, 0]])
    with pytest.raises(ConfigError, match="levels.g: not a numeric column"):
        TabularInterface(levels={"g": (0.0, 1.0)}, schema=face.schema).layout(data)
    with pytest.raises(ConfigError, match="levels.r: give at least two increasing"):
        TabularInterface.from_config({"levels": {"r": [2, 1]}})


def test_star_bins_and_bounds_cover_every_column_of_schema_less_records():
    data = RecordBatch(np.random.default_rng(8).normal(size=(2, 30, 3)), columns=("a", "b", "c"))
    face = TabularInterface.from_config({"bins": {"*": 8, "c": 2}, "bounds": {"*": [-4, 4]}})
    layout = face.layout(data)
    assert [len(c.levels) for c in layout.coded_schema.columns] == [8, 8, 2]
    assert layout.schema.column("a").lower == -4.0
    back = face.decode(face.encode(data, layout).with_set_axis(), layout,
                       np.random.default_rng(1))
    np.testing.assert_array_equal(np.floor(back.values[:, 0, :, 0]),  # bins of width 1
                                  np.clip(np.floor(data.values[..., 0]), -4, 3))


def test_derived_cells_are_not_coded_and_strata_can_be_a_column():
    rng = np.random.default_rng(9)
    data = mixed_batch(rng, cells=True, strata=False)
    face = TabularInterface(bins=BINS, derived_cells=True)
    layout = face.layout(data)
    assert layout.coded_schema.names == ("g", "x", "age")  # no cell column
    back = face.decode(face.encode(data, layout).with_set_axis(), layout, rng)
    assert back.cells is None and back.n_cells == 1
    # strata that are the codes of column g: coded once, decoded from g's released codes
    data = RecordBatch(data.values, None, 1, data.columns, data.weights,
                       data.values[..., 0].astype(int), SCHEMA)
    face = TabularInterface.from_config({"bins": BINS, "strata_from": "g"})
    layout = face.layout(data)
    coded = face.encode(data, layout)
    assert coded.schema.names == ("g", "x", "age")
    flipped = coded.values.copy()
    flipped[..., 0] = 2 - flipped[..., 0]  # a release whose g differs from the data's
    rel = RecordBatch(flipped, columns=coded.columns, schema=coded.schema)
    back = face.decode(rel.with_set_axis(), layout, rng)
    np.testing.assert_array_equal(back.strata[:, 0], 2 - data.strata)
    with pytest.raises(ConfigError, match="strata_from: 'x' is not a categorical column"):
        TabularInterface(bins=BINS, strata_from="x").layout(data)
    with pytest.raises(ConfigError, match="strata_from: give one column name, and no strata"):
        TabularInterface.from_config({"strata_from": "g", "strata": 2})


def test_epsilon_per_privacy_by_grid_value():
    from harness.benchmark.interface import pop_epsilon_per_privacy

    spec = {"epsilon_per_privacy_by": {"n": {60: 48, 200: 160}}, "bins": {"x": 2}}
    assert pop_epsilon_per_privacy(dict(spec), {"n": 200}) == 160.0
    rest = dict(spec)
    assert pop_epsilon_per_privacy(rest, {"n": 60}) == 48.0 and rest == {"bins": {"x": 2}}
    assert pop_epsilon_per_privacy({"epsilon_per_privacy": 2}, None) == 2.0
    assert pop_epsilon_per_privacy({}, None) == 1.0
    with pytest.raises(ConfigError, match="epsilon_per_privacy_by.n: no ε for n=7"):
        pop_epsilon_per_privacy(dict(spec), {"n": 7})
    with pytest.raises(ConfigError, match="epsilon_per_privacy: must be"):
        pop_epsilon_per_privacy({"epsilon_per_privacy_by": {"n": {7: -1}}}, {"n": 7})
