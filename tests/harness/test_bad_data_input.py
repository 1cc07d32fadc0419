"""Issue 23's bad input of a new user (data files, privacy values, overrides, the report's
options, a full disk): each case is one line on stderr naming the key (and the file), exit
status 2, and no file created or changed. Plus the rules that make a user's data path work the
same in every study: a path selects its file, a relative path is read from the working
directory, and the shipped default files are found from any directory."""

import errno
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from study_helpers import cli_main

from harness import config
from harness.engine import store as store_mod
from harness.engine.study import load_study
from harness.errors import ConfigError, one_line, plain
from harness.privacy import PrivacyLedger, exponential_mechanism
from harness.privacy.ranges import MECHANISM_RANGE, method_range

REPO = Path(__file__).resolve().parents[2]
FRAME = REPO / "experiments" / "example" / "data" / "frame.csv"

#: every study that reads a user's file, and its data-path key
DATA_KEYS = {
    "example_survey": "frame",
    "steps_cps": "data_csv",
    "bi_shen_r1": "data_csv",
    "bi_shen_r2": "data_csv",
    "bi_shen_r3": "data_csv",
    "hu_savitsky_williams_sdr": "csv_path",
    "park_ghosh_maps": "data_csv",
    "bowen_liu_fertility": "data_path",
}


def _tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): (p.is_dir() or p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))}


def _one_line(tmp_path, argv, words, command="run"):
    """``harness <command> <argv>`` fails with one line holding ``words``, status 2, no
    traceback, and leaves ``tmp_path`` as it was."""
    before = _tree(tmp_path)
    status, out, err = cli_main(command, *argv)
    assert status == 2, out + err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in out + err and "np.float64" not in err
    for w in words:
        assert w in lines[0], lines[0]
    assert _tree(tmp_path) == before
    return lines[0]


BAD_FILES = {
    "empty": (b"", "is empty"),
    "blank lines": (b"\n\n  \n", "is empty"),
    "binary": (bytes(range(256)) * 8, "is not a text file"),
    "not UTF-8": ("salary\n1\ncafé\n".encode("latin-1"), "is not a text file"),
}


@pytest.mark.parametrize("study, bad", [
    *[(study, bad) for study in sorted(DATA_KEYS) for bad in ("empty", "binary")],
    ("example_survey", "blank lines"), ("bowen_liu_fertility", "blank lines"),
    ("bi_shen_r1", "not UTF-8"), ("bowen_liu_fertility", "not UTF-8")])
def test_an_unreadable_data_file_is_one_line_naming_key_and_file(study, bad, tmp_path):
    """Cases 1 and 2: an empty or binary file, for every study that reads a file (one shared
    reader: the other kinds on two studies)."""
    key = DATA_KEYS[study]
    content, words = BAD_FILES[bad]
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    _one_line(tmp_path, [f"study={study}", "profile=ci", f"study.{key}={path}",
                         f"out_dir={tmp_path / 'out'}"],
              [f"study.{key}", str(path), words])


@pytest.mark.parametrize("study", sorted(set(DATA_KEYS) - {"bowen_liu_fertility"}))
def test_a_header_without_rows_and_a_ragged_csv_are_one_line(study, tmp_path):
    """Case 3 (header-only) and the tokenizer's error, whose text spans two lines in pandas."""
    key = DATA_KEYS[study]
    base = [f"study={study}", "profile=ci", f"out_dir={tmp_path / 'out'}"]
    header = tmp_path / "header.csv"
    header.write_text("a,b,c\n")
    _one_line(tmp_path, [*base, f"study.{key}={header}"],
              [f"study.{key}", str(header), "no data rows"])
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n1,2,3\n")
    if study != "bi_shen_r2":  # sep=';': each line is one field
        _one_line(tmp_path, [*base, f"study.{key}={ragged}"],
                  [f"study.{key}", str(ragged), "Expected 2 fields in line 3"])


def _frame(tmp_path, name="frame.csv", **columns) -> Path:
    frame = pd.read_csv(FRAME)
    for column, values in columns.items():
        frame[column] = values(frame) if callable(values) else values
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("change, words", [
    ({"weight": 0}, ["study.frame.weight", "sum to 0", "positive total"]),
    ({"weight": lambda f: np.where(f.index == 4, np.inf, f["weight"])},
     ["study.frame.weight", "record 4 is inf", "finite"]),
    ({"weight": lambda f: np.where(f["stratum"] == "south", 0, f["weight"])},
     ["study.frame", "stratum 'south'", "no row of positive weight"]),
    ({"age": lambda f: np.where(f.index == 2, np.inf, f["age"])},
     ["study.frame.age", "inf lies outside", "[18, 90]"]),
    ({"age": lambda f: np.where(f.index == 2, 150, f["age"])},  # case 9: not np.float64(150.0)
     ["study.frame.age: 150.0 lies outside the public bounds [18, 90]"]),
])
def test_a_frame_that_every_task_would_fail_on_is_refused_up_front(change, words, tmp_path):
    """Case 3: weights summing to 0 (overall or in one stratum), non-finite values."""
    path = _frame(tmp_path, **change)
    _one_line(tmp_path, ["study=example_survey", "profile=ci", f"study.frame={path}",
                         f"out_dir={tmp_path / 'out'}"], words)


@pytest.mark.parametrize("argv, words", [
    (["study=example_survey", "study.privacy_values=[0.01,1e308]"],
     ["study.privacy_values", "1e+308", "ExpSynth", "allowed: [1e-12, 700]"]),
    (["study=example_survey", "study.privacy_values=[1e-120]"],
     ["study.privacy_values", "1e-120", "allowed: [1e-12, 700]"]),
    (["study=bowen_liu_sim1", "study.log_epsilon=[0,300]"],
     ["study.log_epsilon", "logarithms in [-27.63, 6.551]"]),
    (["study=bowen_liu_sim1", "study.epsilon=[1e200]"], ["study.epsilon", "1e+200"]),
])
def test_privacy_values_that_overflow_a_mechanism_are_refused_up_front(argv, words, tmp_path):
    """Case 4: the privacy values are checked against the range of every method that runs."""
    _one_line(tmp_path, [*argv, "profile=ci", f"out_dir={tmp_path / 'out'}"], words)


def _mechanism_calls():
    from harness.privacy import (
        bounded_laplace_mechanism,
        chaudhuri_monteleoni_noise,
        dirichlet_prior_pseudocount,
        gaussian_mechanism,
        geometric_mechanism,
        laplace_mechanism,
        mcclure_reiter_pseudocount,
        private_svm_laplace,
        smoothed_histogram_weight,
    )
    from harness.privacy.minimax import l2_ball_mechanism

    rng = np.random.default_rng(0)
    s = {"rng": rng, "ledger": PrivacyLedger(), "statistic": "s"}
    return {
        "laplace": lambda e: laplace_mechanism(np.full(4, 1e3), sensitivity=1.0, epsilon=e, **s),
        "bounded_laplace": lambda e: bounded_laplace_mechanism(
            np.full(4, 0.5), lower=0.0, upper=1.0, sensitivity=1.0, epsilon=e, rule="clamp",
            **s),
        "exponential": lambda e: exponential_mechanism(np.arange(4.0)[None] * 1e3,
                                                       sensitivity=1.0, epsilon=e, **s),
        "chaudhuri_monteleoni": lambda e: chaudhuri_monteleoni_noise(
            np.zeros((2, 3)), n=1000, regularization=0.1, epsilon=e, **s),
        "private_svm_laplace": lambda e: private_svm_laplace(
            np.zeros(3), n=80, features=3, epsilon=e, rng=rng, ledger=PrivacyLedger()),
        "geometric": lambda e: geometric_mechanism(np.full(4, 1000), sensitivity=1,
                                                   epsilon=e, **s),
        "gaussian": lambda e: gaussian_mechanism(np.full(4, 1e3), l2_sensitivity=1.0,
                                                 epsilon=e, delta=1e-5, **s),
        "dirichlet_prior": lambda e: dirichlet_prior_pseudocount(
            np.array([1e3]), epsilon=e, ledger=PrivacyLedger()),
        "mcclure_reiter_prior": lambda e: mcclure_reiter_pseudocount(
            np.array([1e3]), epsilon=e, ledger=PrivacyLedger()),
        "smoothed_histogram": lambda e: smoothed_histogram_weight(1000, 10, epsilon=e,
                                                                  ledger=PrivacyLedger()),
        "l2_ball": lambda e: l2_ball_mechanism(np.zeros((2, 3)), radius=1.0, epsilon=e, **s),
    }


@pytest.mark.filterwarnings("error")
def test_each_mechanism_is_finite_over_its_declared_range():
    """The declared ranges are measured, not guessed: every mechanism gives finite output,
    without a floating-point warning, at both ends of its range."""
    calls = _mechanism_calls()
    assert set(calls) == set(MECHANISM_RANGE)
    for name, call in calls.items():
        for e in MECHANISM_RANGE[name]:
            out = np.asarray(call(e), dtype=float)
            assert np.isfinite(out).all(), (name, e, out)
    # beyond the ends: what ε = 1e308 did inside a task, and geometric noise that was 0
    with pytest.raises(ValueError, match="overflow"):
        calls["exponential"](1e308)
    with pytest.raises(ValueError, match="below 1e-15"):
        calls["geometric"](1e-30)


def test_method_ranges_cover_the_shipped_grids():
    lo, hi = method_range()
    assert (lo, hi) == (1e-12, 700.0)
    assert method_range(["laplace"]) == (1e-147, 1e150)
    for study in ("example_survey", "bowen_liu_sim1", "park_ghosh_maps"):
        cfg = config.load([f"study={study}", "profile=ci"])
        assert all(lo <= v <= hi for v in load_study(cfg["study"]).privacy_values())


def _salaries(path: Path) -> Path:
    path.write_text("salary\n" + "\n".join(str(1000 * (i + 1)) for i in range(40)) + "\n")
    return path


def test_a_data_path_selects_its_file(tmp_path):
    """Case 5: the path alone selects the file (the data axis follows it); listing both sources
    runs both; no path runs the stand-in."""
    path = _salaries(tmp_path / "uc.csv")
    cfg = config.load(["study=bi_shen_r1", "profile=ci", f"study.data_csv={path}"])
    assert cfg["study"]["grid"]["data"] == ["csv"]
    study = load_study(cfg["study"])
    train = study.generate({"data": "csv"}, np.random.default_rng(0), 1).train
    np.testing.assert_array_equal(train.values[0, :, 0], 1000.0 * np.arange(1, 41))
    both = config.load(["study=bi_shen_r1", "profile=ci", f"study.data_csv={path}",
                        "study.grid.data=[standin,csv]"])
    assert both["study"]["grid"]["data"] == ["standin", "csv"]
    assert config.load(["study=bi_shen_r1", "profile=ci"])["study"]["grid"]["data"] == \
        ["standin"]
    # the SDR study's csv_path follows the same rule: the file is read (and refused) now
    bad = tmp_path / "sdr.csv"
    bad.write_text("field,gender,salary,weight\n1,Male,abc,2\n")
    _one_line(tmp_path, ["study=hu_savitsky_williams_sdr", "profile=ci",
                         f"study.csv_path={bad}", f"out_dir={tmp_path / 'out'}"],
              ["column salary", "line 2", "not a number"])


def test_relative_data_paths_read_from_the_working_directory(tmp_path, monkeypatch):
    """Case 7: every study reads a relative path from the working directory (also as the
    absolute path workers and resumed runs see), and the shipped defaults are found from any
    directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    mine = _frame(tmp_path / "mine", weight=lambda f: np.where(f["y"] == "low", 1, 100))
    cfg = config.load(["study=example_survey", "profile=ci", "study.frame=mine/frame.csv"])
    assert cfg["study"]["frame"] == str(mine)
    codes, weights = load_study(cfg["study"]).population()
    assert weights.max() == 100 and len(codes) == len(pd.read_csv(mine))
    salaries = _salaries(tmp_path / "mine" / "uc.csv")
    for study, key in (("bi_shen_r1", "data_csv"), ("park_ghosh_maps", "data_csv"),
                       ("steps_cps", "data_csv"), ("bowen_liu_fertility", "data_path")):
        target = salaries if study == "bi_shen_r1" else tmp_path / "mine" / "absent.csv"
        argv = [f"study={study}", "profile=ci", f"study.{key}=mine/{target.name}"]
        if study == "bi_shen_r1":
            assert config.load(argv)["study"][key] == str(salaries)
        else:  # the message names the file in the working directory
            with pytest.raises(ConfigError, match=f"study.{key}: cannot read {target}"):
                config.load(argv)
    # the shipped files: null in the config, found inside the package from here too
    shipped = config.load(["study=example_survey", "profile=ci"])
    assert shipped["study"]["frame"] is None
    assert len(load_study(shipped["study"]).population()[0]) == len(pd.read_csv(FRAME))
    fertility = config.load(["study=bowen_liu_fertility", "profile=ci"])
    assert load_study(fertility["study"]).data.n == 100


def test_hydra_leaves_the_working_directory_alone():
    """Case 7: no Hydra config of ours changes the working directory (version_base 1.3: a job
    runs where it was started), so 'the working directory' is the user's."""
    texts = [p.read_text() for p in (REPO / "conf").rglob("*.yaml")]
    assert not any("chdir" in t for t in texts)


def test_park_ghosh_maps_takes_a_users_csv_from_the_command_line(tmp_path):
    """Case 6: the override that the refusal gives (labels with a dot, PeGS.rs, cannot be
    reached by dotted keys) makes a user-CSV run of PeGS.rs possible from the command line."""
    from experiments.park_ghosh.data import schema, standin_discharge
    from harness.engine.sweep import run_sweep

    csv = tmp_path / "discharges.csv"
    schema().decode(standin_discharge(300, np.random.default_rng(1))).to_csv(csv, index=False)
    base = ["study=park_ghosh_maps", "profile=ci", f"study.data_csv={csv}",
            f"out_dir={tmp_path / 'out'}"]
    line = _one_line(tmp_path, base, ["study.roster.PeGS.structure", "'public'",
                                      "allowed here: given"])
    given = line.split("e.g. '", 1)[1].split("'", 1)[0]
    assert given == "study.roster={PeGS:{structure:given},PeGS.rs:{structure:given}}"
    _one_line(tmp_path, [*base, "study.roster.PeGS.rs.structure=given"],
              ["study.roster.PeGS.rs.structure", "study.roster={PeGS.rs:{structure:...}}"])
    # leaving the public-structure methods out is enough too
    config.load([*base, "methods=[Boot]"])
    cfg = config.load([*base, given, "methods=[PeGS.rs]", "study.replicates.ci=1",
                       "study.n_targets=50", "study.privacy_values=[1]", "executor.n_jobs=1"])
    assert cfg["study"]["roster"]["PeGS.rs"]["structure"] == "given"
    assert not run_sweep(cfg, progress=False).failed


@pytest.mark.parametrize("multirun", [[], ["-m"]])
@pytest.mark.parametrize("override", ["study.grid.n=[200000", "study.grid.n='abc",
                                      "+study.grid.n={a"])
def test_a_malformed_override_names_its_key(override, multirun, tmp_path):
    """Case 8: Hydra's parse error names no key; ours does."""
    before = _tree(tmp_path)
    status, out, err = cli_main(*multirun, "run", override, f"out_dir={tmp_path / 'out'}")
    assert status == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("error: study.grid.n: cannot parse the value"), err
    assert _tree(tmp_path) == before


def test_numpy_scalars_print_as_plain_numbers():
    """Case 9, at the source (plain) and as the CLI's last line of defence (one_line)."""
    assert repr(plain(np.float64(150.0))) == "150.0" and plain(np.int64(3)) == 3
    assert plain("x") == "x" and plain([1]) == [1]
    msg = ConfigError(f"k: {np.float64(150.0)!r} and {np.int64(-2)!r} and {np.True_!r}\nmore")
    assert one_line(msg) == "k: 150.0 and -2 and True"


def test_a_full_disk_during_aggregation_names_the_file(tmp_path, monkeypatch):
    """Case 10: as the earlier disk-full cases, the writer is made to fail, here with ENOSPC
    and no file name (as pyarrow raises it)."""
    out = tmp_path / "out"
    argv = ["study=bowen_liu_sim1", "profile=ci", "study.grid.n=[40]", "study.grid.pi=[0.1]",
            "methods=[Ori,LAP]", "study.replicates.ci=20", f"out_dir={out}", "executor.n_jobs=1"]
    from harness.engine.sweep import run_sweep

    assert not run_sweep(config.load(argv), progress=False).failed

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_mod.pq, "write_table", full)
    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    status, stdout, err = cli_main("aggregate", *argv)
    assert status == 2 and len(err.splitlines()) == 1, err
    target = out / "bowen_liu_sim1" / "ci" / "metrics.parquet"
    assert f"cannot write {target} (No space left on device)" in err
    # no half-written file, no temporary left behind, nothing else changed
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == files


@pytest.mark.parametrize("args, words", [
    (["--render-only", "--studies=nope"],
     ["'nope'", "allowed: bowen_liu_sim1, bowen_liu_sim2", "bowen_liu_fertility"]),
    (["--studies=nope"], ["'nope'", "allowed: bowen_liu_sim1"]),
    (["--studies="], ["names no study", "allowed: bowen_liu_sim1"]),
    (["--render-only", "--studies=bowen_liu_sim1"], ["--studies", "--render-only",
                                                     "give one of the two"]),
])
def test_report_studies_option_is_checked(args, words, tmp_path):
    """Case 11: --studies names the paper's studies, and is refused with --render-only (which
    re-renders the whole report); nothing under the repository changes."""
    docs = REPO / "docs" / "bowen_liu.md"
    stamp = docs.stat().st_mtime_ns
    _one_line(tmp_path, ["paper=bowen_liu", *args], words, command="report")
    assert docs.stat().st_mtime_ns == stamp


def test_every_data_path_key_follows_the_one_rule():
    """Case 5/7: every shipped study with a key that names a file declares it in
    ``data_files`` (so it is resolved from the working directory and selects its file), and
    this file's cases cover each of them."""
    import yaml

    from harness.engine.study import study_class

    declared = {}
    for path in sorted((REPO / "conf" / "study").glob("*.yaml")):
        name = path.stem
        cls = study_class(yaml.safe_load(path.read_text()))
        path_keys = {k for k in cls.extra_keys
                     if k != "csv_columns" and any(w in k for w in ("csv", "path", "frame"))}
        assert path_keys == set(cls.data_files), name
        declared.update({name: k for k in cls.data_files})  # noqa: B035 (at most one key)
    assert declared == DATA_KEYS


def test_a_compressed_csv_is_still_read_and_a_damaged_one_is_one_line(tmp_path):
    """pandas read compressed CSVs by their name before the shared reader; it still does."""
    import gzip

    good = tmp_path / "uc.csv.gz"
    good.write_bytes(gzip.compress(_salaries(tmp_path / "uc.csv").read_bytes()))
    cfg = config.load(["study=bi_shen_r1", "profile=ci", f"study.data_csv={good}"])
    assert load_study(cfg["study"]).salaries("csv").tolist() == [1000.0 * (i + 1)
                                                               for i in range(40)]
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(gzip.compress(b"salary\n1\n")[:-9])
    _one_line(tmp_path, ["study=bi_shen_r1", "profile=ci", f"study.data_csv={bad}",
                         f"out_dir={tmp_path / 'out'}"],
              ["study.data_csv", f"cannot read {bad} as CSV"])
