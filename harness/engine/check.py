"""Regression checks of a sweep's metrics against a committed snapshot.

``harness check study=<s> profile=<p>`` runs the sweep (resumably, into the normal sweep
directory), aggregates it and compares the tidy metrics table with the snapshot
``results/reference/<s>/<p>.parquet``. ``harness check --update`` rewrites the snapshot and
prints what changed, for a reviewer to commit deliberately.

Two modes:

* ``exact``: the same code, seed, block size and numpy must give identical numbers. Every cell
  (scenario, method, ε, estimand, metric) whose value, MCSE or replicate count differs is listed,
  and so is every cell present on one side only. For developers on one machine: numpy does not
  promise bit-identical streams across releases.
* ``statistical`` (default): each difference is judged against its Monte Carlo standard error,
  so a legitimate change of random-number consumption (another seed, another block size, a
  synthesizer that draws in another order) passes, while a real shift of bias, RMSE, coverage,
  width, model SE or the usable proportion fails. Cells present on one side only, or defined
  on one side only (NaN on the other), always fail.

The statistics of the statistical mode
--------------------------------------
For a cell with values ``old``, ``new`` and Monte Carlo SEs ``s_old``, ``s_new`` of two
independent runs, ``z = (new - old) / sqrt(s_old² + s_new²)`` is approximately N(0, 1) when
nothing changed but the random numbers. With K cells compared, a fixed |z| > 4 threshold gives a
false alarm with probability ≈ K · 6.3e-5 (17 % at K = 3000). The per-cell threshold therefore
controls the family-wise false-alarm rate ``alpha`` (default 0.01) over the K cells actually
compared, by Šidák's correction on the normal approximation:
``threshold = max(4, Φ⁻¹(1 - p/2))`` with ``p = 1 - (1 - alpha)^(1/K)`` (4.66 at K = 3192,
alpha = 0.01). By Šidák's inequality the two-sided correction stays valid, i.e. conservative,
for jointly normal z's with any correlation (and Bonferroni's, barely larger, for any
dependence), so correlated metrics and cells cost power, not false alarms. The minimum of 4
keeps a margin for small K, where a skewed MC estimate's tail can be heavier than the normal's.

Metrics judged: every metric of the table except those in :data:`NOT_JUDGED`, i.e. for the
performance table ``usable_prop``, ``bias``, ``emp_se``, ``rmse``, ``coverage``, ``width`` and
``model_se`` (a metric added later is judged by default). Not judged, because they are exact
functions of judged metrics and would give the same z again (inflating K and reporting one shift
several times): ``rel_bias`` (bias / truth), ``mse`` (rmse²), ``scaled_rmse`` (rmse / truth),
``scaled_width`` (width / truth) and ``rel_error_model_se`` (model SE over empirical SE).
``rmse`` is kept beside ``bias`` and ``emp_se`` (rmse² ≈ bias² + emp_se²) because it is the
headline metric; ``emp_se`` is kept because where the bias is large a change of spread hardly
moves the RMSE. The MCSE of ``emp_se``, emp_se / sqrt(2(R - 1)), assumes normal estimates (it
grows with their kurtosis); its z's were calibrated on a binary-proportion study and a normal
mean-and-variance study (SD 0.94 and 1.01). If a study with heavy-tailed estimates raises false
alarms on it, add it to :data:`NOT_JUDGED`.
Exact mode compares every metric. Cells whose MCSE rests on fewer than
:data:`MIN_REPLICATES` replicates on either side are not judged (the MCSE itself is too uncertain
for a normal z) and are counted in the summary.

MCSE = 0. A proportion (``coverage``, ``usable_prop``) observed as exactly 0 or 1 has MCSE
sqrt(p(1 - p)/R) = 0, yet a true proportion of 1 - 1/(2R) is as compatible with it. Each side's
SE of a proportion is therefore floored at the binomial SE of the same proportion shifted by half
a replicate: ``sqrt(p̃(1 - p̃)/R)`` with ``p̃ = (R·p + 1/2)/(R + 1)``. Both sides exactly 1 give
z = 0; 1 against 0.99 with R = 1000 is judged with SE 0.0032. For any other metric an MCSE of 0
means the metric is deterministic (all replicates agree), so any difference beyond floating-point
noise (relative 1e-9) is a real change and fails (z = ±inf).

Calibration (the binary-proportion study, profile=ci, 6 seeds, 15 pairs, 47 880 judged z's):
|z| > 3 in 77 against 110 expected under N(0, 1), |z| > 3.5 in 9 against 19, |z| > 4 in none
against 2.6; the largest |z| of a pair was 3.75, against a threshold of 4.66 over the 3192 cells
of one comparison.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ConfigError, allowed

REFERENCE_DIR = Path(__file__).resolve().parents[2] / "results" / "reference"
MODES = ("statistical", "exact")
KEY_COLUMNS = ("scenario", "method", "epsilon", "estimand", "metric")
#: keys of the contract's privacy axis, nested m and the neighbour relation: kept when the
#: metrics have them, and joined on when both sides have them (snapshots made before they
#: existed lack them, and compare exactly on every other key and number)
OPTIONAL_KEYS = ("privacy", "m", "relation")
VALUE_COLUMNS = ("value", "mcse", "n_rep")
NOT_JUDGED = ("rel_bias", "mse", "scaled_rmse", "scaled_width", "rel_error_model_se")
MIN_REPLICATES = 30
PROPORTIONS = ("usable_prop", "coverage")
DEFAULT_ALPHA = 0.01
MIN_THRESHOLD = 4.0
RTOL = 1e-9  # relative floating-point tolerance of the statistical mode
MAX_LISTED = 40  # rows printed; the full listing goes to <sweep dir>/check.csv
META_KEY = b"harness.check"
OPTIONS = ("--mode", "--update", "--alpha", "--reference-dir")


# --- command-line options -------------------------------------------------------------------
@dataclass
class CheckOptions:
    mode: str = "statistical"
    update: bool = False
    alpha: float = DEFAULT_ALPHA
    reference_dir: Path = REFERENCE_DIR


def parse_options(argv: list[str]) -> tuple[CheckOptions, list[str]]:
    """Split ``--mode M``/``--mode=M``, ``--update``, ``--alpha A`` and ``--reference-dir D``
    from the Hydra overrides; bad values raise a one-line :class:`ConfigError`."""
    opts, rest = CheckOptions(), []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("--"):
            rest.append(arg)
            continue
        name, has_value, value = arg.partition("=")
        if name not in OPTIONS:
            raise allowed("check: option", name, OPTIONS)
        if name == "--update":
            if has_value:
                raise ConfigError("--update: takes no value")
            opts.update = True
            continue
        if not has_value:
            if not args or args[0].startswith("--"):
                raise ConfigError(f"{name}: needs a value")
            value = args.pop(0)
        if name == "--mode":
            if value not in MODES:
                raise allowed("--mode", value, MODES)
            opts.mode = value
        elif name == "--alpha":
            try:
                opts.alpha = float(value)
            except ValueError:
                opts.alpha = math.nan
            if not 0 < opts.alpha < 1:
                raise ConfigError(f"--alpha: must be a number in (0, 1), got {value!r}")
        else:
            opts.reference_dir = Path(value)
    return opts, rest


# --- snapshots --------------------------------------------------------------------------------
def snapshot_path(reference_dir: Path, config: dict) -> Path:
    return Path(reference_dir) / config["study"]["name"] / f"{config['profile']['name']}.parquet"


def snapshot_frame(metrics: pd.DataFrame) -> pd.DataFrame:
    """The columns a snapshot keeps (the scenario key holds every grid axis), sorted."""
    keys = _keys(metrics)
    out = metrics[keys + list(VALUE_COLUMNS)].copy()
    for c in ("scenario", "method", "estimand", "metric", "relation"):
        if c in out:
            out[c] = out[c].astype(str)
    for c in ("epsilon", "privacy", "value", "mcse"):
        if c in out:
            out[c] = out[c].astype(float)
    for c in ("m", "n_rep"):
        if c in out:
            out[c] = out[c].astype(np.int64)
    out = out.sort_values(keys, na_position="first", kind="stable")
    return out.reset_index(drop=True)


def _keys(*frames: pd.DataFrame) -> list[str]:
    """The key columns: KEY_COLUMNS and the optional keys every frame has."""
    return list(KEY_COLUMNS) + [c for c in OPTIONAL_KEYS if all(c in f for f in frames)]


def snapshot_meta(config: dict) -> dict:
    from .sweep import code_version, study_module

    return {
        "study": config["study"]["name"],
        "profile": config["profile"]["name"],
        "seed": config["seed"],
        "block_size": config["block_size"],
        "n_replicates": config["n_replicates"],
        "methods": list(config["methods"]),
        "code_version": code_version(study_module(config)),
        "numpy": np.__version__,
    }


def read_snapshot(path: Path) -> tuple[pd.DataFrame, dict]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
        raw = (table.schema.metadata or {}).get(META_KEY)
        meta = json.loads(raw) if raw else {}
        return snapshot_frame(table.to_pandas()), meta
    except (OSError, ValueError, KeyError) as exc:  # pyarrow errors derive from these
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"check: cannot read snapshot {path} ({reason}); rewrite it with "
                          f"harness check --update") from None


def write_snapshot(frame: pd.DataFrame, path: Path, meta: dict) -> None:
    """Write atomically (temporary file + rename), zstd-compressed, with ``meta`` in the
    parquet key-value metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .store import _atomic

    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = dict(table.schema.metadata or {})
    metadata.pop(b"pandas", None)  # pandas' own metadata: large and not needed
    metadata[META_KEY] = json.dumps(meta, sort_keys=True).encode()
    table = table.replace_schema_metadata(metadata)
    _atomic(path, lambda tmp: pq.write_table(table, tmp, compression="zstd",
                                             compression_level=9))


# --- comparison -------------------------------------------------------------------------------
def threshold(n_cells: int, alpha: float = DEFAULT_ALPHA) -> float:
    """|z| above which a cell is flagged: Šidák's per-cell two-sided level for a family-wise
    false-alarm rate ``alpha`` over ``n_cells`` normal z's, and never below 4."""
    from scipy.stats import norm

    if n_cells < 1:
        return MIN_THRESHOLD
    p_cell = -math.expm1(math.log1p(-alpha) / n_cells)  # 1 - (1 - alpha)^(1/K), accurately
    return max(MIN_THRESHOLD, float(norm.isf(p_cell / 2)))


def proportion_se(value, mcse, n_rep) -> np.ndarray:
    """MCSE of a proportion, floored at the binomial SE with half a replicate added (so that a
    proportion of exactly 0 or 1 still has a sensible SE)."""
    value, mcse, n_rep = (np.asarray(x, dtype=float) for x in (value, mcse, n_rep))
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = (n_rep * value + 0.5) / (n_rep + 1)
        floor = np.sqrt(shifted * (1 - shifted) / n_rep)
    return np.fmax(np.nan_to_num(mcse, nan=0.0), floor)


def z_scores(old, new, se_old, se_new) -> np.ndarray:
    """(new - old) / combined SE; 0 within floating-point noise, ±inf when both SEs are 0."""
    old, new = np.asarray(old, dtype=float), np.asarray(new, dtype=float)
    delta = new - old
    se = np.hypot(np.asarray(se_old, dtype=float), np.asarray(se_new, dtype=float))
    noise = RTOL * np.fmax(np.fmax(np.abs(old), np.abs(new)), 1e-3)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(se > 0, delta / se, np.sign(delta) * np.inf)
    return np.where(np.abs(delta) <= noise, 0.0, z)


@dataclass
class Comparison:
    mode: str
    listed: pd.DataFrame  # flagged (statistical) or differing (exact) cells, worst first
    n_compared: int
    n_changed: int  # cells whose value, MCSE or count differ at all
    only_old: int
    only_new: int
    threshold: float = math.nan
    alpha: float = math.nan
    n_unjudged: int = 0
    worst: dict = field(default_factory=dict)
    judged: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.listed.empty

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        sides = f"{self.only_old} only in snapshot, {self.only_new} only in this run"
        if self.mode == "exact":
            return (f"check exact: {verdict}: {self.n_compared} cells compared (all metrics: "
                    f"value, mcse, n_rep), {self.n_changed} differ, {sides}")
        flagged = int((~self.listed["field"].isin(ONE_SIDE)).sum())
        worst = ""
        if self.worst and self.worst["z"] == 0:
            worst = ", largest |z| 0"
        elif self.worst:
            w = self.worst
            worst = (f", largest |z| {abs(w['z']):.2f} ({w['method']} {w['scenario']} "
                     f"ln ε={w['ln_eps']:g} {w['estimand']} {w['metric']})")
        unjudged = (f", {self.n_unjudged} not judged (fewer than {MIN_REPLICATES} replicates "
                    f"or MCSE unknown)" if self.n_unjudged else "")
        return (f"check statistical: {verdict}: {self.n_compared} cells compared "
                f"({', '.join(self.judged)}){worst}; threshold |z| > {self.threshold:.2f} "
                f"(family-wise false-alarm rate {self.alpha:g}, Šidák over "
                f"{self.n_compared} cells); {flagged} flagged, {sides}{unjudged}; "
                f"{self.n_changed} cells differ at all")

    def format(self, limit: int = MAX_LISTED) -> str:
        if self.listed.empty:
            return self.summary()
        shown = self.listed.head(limit)
        text = shown.to_string(index=False, float_format=lambda x: f"{x:.6g}")
        more = len(self.listed) - len(shown)
        tail = f"\n... and {more} more rows" if more > 0 else ""
        sides = []
        for label in ONE_SIDE:
            part = self.listed[self.listed["field"] == label]
            if len(part):
                by = [f"{k} ({v})" for k, v in part["metric"].value_counts(sort=False).items()]
                methods = ", ".join(dict.fromkeys(part["method"]))
                sides.append(f"{label}: {len(part)} cells; metrics {', '.join(by)}; "
                             f"methods {methods}\n")
        return f"{text}{tail}\n{''.join(sides)}{self.summary()}"


def _ln_eps(eps: pd.Series) -> pd.Series:
    with np.errstate(divide="ignore", invalid="ignore"):
        return pd.Series(np.round(np.log(eps.to_numpy(dtype=float)), 6), index=eps.index)


def _join(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    keys = _keys(old, new)
    for side, frame in (("snapshot", old), ("run", new)):
        if frame.duplicated(keys).any():
            raise ConfigError(f"check: the {side}'s cells are not unique on {', '.join(keys)} "
                              f"(a snapshot made before nested m or a privacy axis existed); "
                              f"re-make it with harness check --update")
    both = old.merge(new, on=keys, how="outer", suffixes=("_old", "_new"),
                     indicator=True, sort=False)
    both.insert(3, "ln_eps", _ln_eps(both["epsilon"]))
    return both


def _same(a: pd.Series, b: pd.Series) -> np.ndarray:
    a, b = a.to_numpy(dtype=float), b.to_numpy(dtype=float)
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _changed(both: pd.DataFrame) -> np.ndarray:
    ok = np.ones(len(both), dtype=bool)
    for c in VALUE_COLUMNS:
        ok &= _same(both[f"{c}_old"], both[f"{c}_new"])
    return (both["_merge"] == "both").to_numpy() & ~ok


_SHOW = ["method", "scenario", "epsilon", "ln_eps", "estimand", "metric"]
ONE_SIDE = ("only in snapshot", "only in this run")


def _one_side(both: pd.DataFrame) -> pd.DataFrame:
    """Cells present in the snapshot only or in this run only, with their values."""
    side = both["_merge"].map({"left_only": ONE_SIDE[0], "right_only": ONE_SIDE[1]})
    sel = side.notna().to_numpy()
    return both.loc[sel, _SHOW].assign(
        field=side[sel].astype(str), old=both.loc[sel, "value_old"].astype(float),
        new=both.loc[sel, "value_new"].astype(float))


def compare_exact(old: pd.DataFrame, new: pd.DataFrame) -> Comparison:
    both = _join(old, new)
    matched = (both["_merge"] == "both").to_numpy()
    rows = []
    for c in VALUE_COLUMNS:
        differ = matched & ~_same(both[f"{c}_old"], both[f"{c}_new"])
        part = both.loc[differ, _SHOW].assign(
            field=c, old=both.loc[differ, f"{c}_old"].astype(float),
            new=both.loc[differ, f"{c}_new"].astype(float))
        rows.append(part)
    listed = pd.concat([*rows, _one_side(both)]).sort_index(kind="stable")
    listed["delta"] = listed["new"] - listed["old"]
    return Comparison(
        "exact", listed.reset_index(drop=True), int(matched.sum()), int(_changed(both).sum()),
        int((both["_merge"] == "left_only").sum()), int((both["_merge"] == "right_only").sum()),
    )


def compare_statistical(old: pd.DataFrame, new: pd.DataFrame,
                        alpha: float = DEFAULT_ALPHA) -> Comparison:
    both = _join(old, new)
    n_changed = int(_changed(both).sum())
    only_old = int((both["_merge"] == "left_only").sum())
    only_new = int((both["_merge"] == "right_only").sum())
    judged = both[(both["_merge"] == "both") & ~both["metric"].isin(NOT_JUDGED)].copy()
    v_old, v_new = judged["value_old"].to_numpy(float), judged["value_new"].to_numpy(float)
    se_old, se_new = judged["mcse_old"].to_numpy(float), judged["mcse_new"].to_numpy(float)
    prop = judged["metric"].isin(PROPORTIONS).to_numpy()
    se_old = np.where(prop, proportion_se(v_old, se_old, judged["n_rep_old"]), se_old)
    se_new = np.where(prop, proportion_se(v_new, se_new, judged["n_rep_new"]), se_new)
    one_nan = np.isnan(v_old) ^ np.isnan(v_new)  # (undefined on both sides: equal)
    finite = ~np.isnan(v_old) & ~np.isnan(v_new)
    few = np.fmin(judged["n_rep_old"].to_numpy(float), judged["n_rep_new"].to_numpy(float))
    unjudged = finite & (np.isnan(se_old) | np.isnan(se_new) | ~(few >= MIN_REPLICATES))
    compared = finite & ~unjudged
    z = np.full(len(judged), np.nan)
    z[compared] = z_scores(v_old[compared], v_new[compared], se_old[compared], se_new[compared])
    k = int(compared.sum())
    names = tuple(dict.fromkeys(judged["metric"].to_numpy()[compared]))
    limit = threshold(k, alpha)
    judged["old"], judged["new"], judged["delta"] = v_old, v_new, v_new - v_old
    judged["z"], judged["threshold"] = z, limit
    flagged = (compared & (np.abs(z) > limit)) | one_nan
    listed = judged.loc[flagged, [*_SHOW, "old", "new", "delta", "z", "threshold"]]
    listed = listed.assign(field=np.where(np.isnan(listed["z"]), "defined on one side only",
                                          "value"))
    listed = pd.concat([listed, _one_side(both)])
    # shifts first (largest |z| first), then cells defined or present on one side only
    rank = listed["field"].map({"value": 0, "defined on one side only": 1}).fillna(2)
    listed = listed.assign(rank_=rank, abs_z_=-listed["z"].abs().fillna(0))
    listed = listed.sort_values(["rank_", "abs_z_"], kind="stable").drop(
        columns=["rank_", "abs_z_"])
    worst = {}
    if compared.any():
        i = int(np.nanargmax(np.where(compared, np.abs(z), -1.0)))
        worst = {**judged.iloc[i][_SHOW].to_dict(), "z": float(z[i])}
    return Comparison(
        "statistical", listed.reset_index(drop=True), k, n_changed, only_old, only_new,
        threshold=limit, alpha=alpha, n_unjudged=int(unjudged.sum()), worst=worst,
        judged=names,
    )


def compare(old: pd.DataFrame, new: pd.DataFrame, mode: str = "statistical",
            alpha: float = DEFAULT_ALPHA) -> Comparison:
    if mode not in MODES:
        raise allowed("--mode", mode, MODES)
    if mode == "exact":
        return compare_exact(snapshot_frame(old), snapshot_frame(new))
    return compare_statistical(snapshot_frame(old), snapshot_frame(new), alpha)


# --- the command ------------------------------------------------------------------------------
def _meta_notes(meta: dict, current: dict) -> list[str]:
    notes = []
    for key in ("seed", "block_size", "n_replicates", "methods", "numpy"):
        if key in meta and meta[key] != current[key]:
            notes.append(f"{key}={meta[key]} (snapshot) vs {current[key]} (this run)")
    return notes


def run_check(config: dict, opts: CheckOptions) -> int:
    """Run and aggregate the sweep, compare with (or with ``--update`` rewrite) the snapshot.
    Returns the exit status: 0 pass (or snapshot written), 1 differences flagged or failed
    tasks. A missing snapshot raises :class:`ConfigError` before anything is run."""

    from .aggregate import MetricsStream, load_metrics
    from .store import atomic_write_csv
    from .sweep import run_and_read, sweep_dir

    path = snapshot_path(opts.reference_dir, config)
    study, profile = config["study"]["name"], config["profile"]["name"]
    if not opts.update and not path.exists():
        raise ConfigError(
            f"check: no snapshot {path}; create it with harness check --update "
            f"study={study} profile={profile} (and commit it)")
    old, old_meta = None, {}
    if path.exists():
        try:
            old, old_meta = read_snapshot(path)
        except ConfigError as exc:
            if not opts.update:
                raise
            print(f"note: {exc}; replacing it")
    stream = MetricsStream(config)
    summary, metrics = run_and_read(
        config, lambda: load_metrics(config, stream),
        show=lambda s: s.show(failed_note="nothing compared"), listener=stream,
    )
    if summary.failed:
        return 1
    # the sweep directory may hold other methods too (an earlier run's, a benchmark's): the
    # check compares this config's methods, as its snapshot's meta says
    new = snapshot_frame(metrics[metrics["method"].isin(config["methods"])])
    meta = snapshot_meta(config)
    if old is not None:
        for note in _meta_notes(old_meta, meta):
            print(f"note: {note}")
    if opts.update:
        if old is None:
            write_snapshot(new, path, meta)
            print(f"snapshot written: {path} ({len(new)} cells, {path.stat().st_size} bytes); "
                  f"no previous snapshot. Review and commit it.")
            return 0
        result = compare(old, new, opts.mode, opts.alpha)
        if result.n_changed == 0 and result.only_old == 0 and result.only_new == 0:
            print(f"snapshot unchanged: {path} ({len(new)} cells); not rewritten")
            return 0
        print("changes relative to the old snapshot:")
        print(result.format())
        write_snapshot(new, path, meta)
        print(f"snapshot updated: {path} ({len(new)} cells, {path.stat().st_size} bytes). "
              f"Review the changes above and commit it.")
        return 0
    result = compare(old, new, opts.mode, opts.alpha)
    listing = sweep_dir(config) / "check.csv"
    atomic_write_csv(result.listed, listing)
    print(result.format())
    if not result.passed:
        print(f"full listing: {listing}; if the change is intended: harness check --update "
              f"study={study} profile={profile}")
    return 0 if result.passed else 1
