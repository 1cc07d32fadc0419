"""The Study protocol: what the engine knows of a study. Studies live in
``experiments/`` and are found through the ``module`` key of their config."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping

import numpy as np

from ..errors import ConfigError, allowed
from ..evaluation import IntervalEvaluation, MetricEvaluation
from ..inference import Pooled
from ..synthesizers import Release, Synthesizer
from ..validation import check_each, check_number

Scenario = Mapping[str, object]


class Study(ABC):
    """A simulation study: a grid of scenarios, a privacy axis, a data-generating
    process (``generate``: a batch, or an :class:`harness.data.Original` with parts), a roster
    of methods, and evaluations of every release (``evaluations``).

    A study whose only evaluation is one interval analysis of the released sets may instead
    define ``estimands`` and ``analyse``: ``evaluations`` then defaults to that one
    :class:`IntervalEvaluation`, named ``analysis``.

    Subclasses receive the (validated) study config as a plain dict.
    """

    name: str
    #: The study's grid axes and the rule every value of each must meet, enforced by
    #: the engine before :meth:`validate`, so no study can forget to check its grid. A rule is
    #: the keyword arguments of :func:`harness.validation.check_number` (``{"integer": True,
    #: "minimum": 2}``) or a callable ``rule(key, value)`` raising ConfigError. A study class
    #: that declares no rules cannot be loaded.
    grid_rules: dict[str, dict | Callable] = {}
    #: study-level keys a config may set, besides the common ones in ``COMMON_KEYS``
    extra_keys: tuple[str, ...] = ()
    #: the privacy parameters this study can sweep (its config picks one as ``privacy_axis``);
    #: every private method of the roster must take that parameter
    privacy_axes: tuple[str, ...] = ("epsilon",)
    #: the config keys that name a data file (their values are read from the working
    #: directory; ``null`` is the study's shipped file, if it has one), each with the value of
    #: the ``data`` grid axis that reads it, or None when the study has no such axis: setting
    #: the path selects the file (:func:`harness.datafiles.select_data_files`)
    data_files: dict[str, str | None] = {}
    COMMON_KEYS = (
        "name", "module", "replicates", "grid", "log_epsilon", "epsilon", "roster",
        "combining_rule", "discard_unusable", "privacy_axis", "privacy_values",
        "log_privacy_values", "evaluations", "block_size", "relation", "delta", "benchmark",
    )

    def __init__(self, config: dict):
        self.config = config
        self.name = config["name"]

    # --- grid -------------------------------------------------------------------------------
    def grid_axes(self) -> dict[str, list]:
        return {k: list(v) for k, v in self.config["grid"].items()}

    # --- the privacy axis -----------------------------------------------------------------
    def privacy_axis(self) -> str:
        """The privacy parameter the study sweeps (``privacy_axis``; ε by default)."""
        return self.config.get("privacy_axis") or "epsilon"

    def privacy_values(self) -> list[float]:
        """The swept values: ``privacy_values`` / ``log_privacy_values`` (any axis), or for the ε
        axis also ``epsilon`` / ``log_epsilon``."""
        values, logs = self._privacy_grid()
        if values is not None:
            return [float(e) for e in values]
        return [float(np.exp(x)) for x in logs]

    def epsilons(self) -> list[float]:
        return self.privacy_values()

    def _privacy_grid(self) -> tuple[list | None, list | None]:
        c = self.config
        if c.get("privacy_values") is not None or c.get("log_privacy_values") is not None:
            return c.get("privacy_values"), c.get("log_privacy_values")
        return c.get("epsilon"), c.get("log_epsilon")

    def log_epsilon_of(self, epsilon: float) -> float:
        """ln ε of a realised ε: the config's own ln ε value when ε is on its grid (so rows of an
        ε sweep carry the grid's values exactly), else the logarithm."""
        values, logs = self._privacy_grid()
        if values is None and self.privacy_axis() == "epsilon":
            for x in logs:
                if float(np.exp(x)) == epsilon:
                    return float(x)
        return float(np.log(epsilon))

    # --- the study proper ---------------------------------------------------------------------
    @abstractmethod
    def generate(self, scenario: Scenario, rng: np.random.Generator, n_replicates: int):
        """The original data of ``n_replicates`` replicates: a batch (what methods release), or
        an :class:`harness.data.Original` with the batch as ``train`` and other parts."""

    def estimands(self, scenario: Scenario) -> dict[str, float]:
        """Estimand names (in analysis order) and their true values (for the default
        evaluation, see the class docstring)."""
        raise NotImplementedError

    def analyse(self, sets, scenario: Scenario) -> tuple[np.ndarray, np.ndarray]:
        """Estimates and within-set variances, shape (R, m, E), of sets with axes (R, m, ...) (the
        default evaluation, see the class docstring)."""
        raise NotImplementedError

    @abstractmethod
    def method(self, label: str, scenario: Scenario) -> Synthesizer:
        """The configured synthesizer of roster entry ``label``."""

    # --- equal privacy (issue 24 item 3) --------------------------------------------------------
    def relation(self) -> str | None:
        """The neighbour relation every method is calibrated under (config key
        ``study.relation``); None: each method's own (the default)."""
        return self.config.get("relation")

    def synthesizer(self, label: str, scenario: Scenario) -> Synthesizer:
        """The synthesizer of roster entry ``label`` (:meth:`method`, or the benchmark's adapter:
        :meth:`built`) calibrated under the study's relation, and at the study's δ
        (``study.delta``) if it states one; a method without a calibration under the relation
        raises a ConfigError."""
        return self.built(label, scenario).calibrate(self.relation(), label,
                                                     self.config.get("delta"))

    def usable(self, release: Release, pooled: Pooled) -> np.ndarray:
        """Per (replicate, estimand) usability; default: the pooled variance T is positive."""
        return pooled.usable

    # --- evaluations -------------------------------------------------------------------
    def evaluations(self) -> list[IntervalEvaluation | MetricEvaluation]:
        """What a data user does with every release. Default: one interval evaluation
        ``analysis`` of ``estimands`` and ``analyse`` (pooled with the config's
        ``combining_rule``)."""
        if type(self).analyse is Study.analyse:
            raise ConfigError(f"study.module: {type(self).__name__} declares no evaluations "
                              f"(define evaluations(), or estimands() and analyse())")
        return [IntervalEvaluation(
            "analysis", self.estimands,
            lambda original, release, scenario: self.analyse(release.sets, scenario),
            self.config.get("combining_rule") or "partial", self.usable)]

    def all_evaluations(self) -> list[IntervalEvaluation | MetricEvaluation]:
        """The study's evaluations plus the plug-in evaluations its config names."""
        from ..plugins import evaluation_plugin

        own = list(self.evaluations())
        names = {e.name for e in own}
        for name in self.config.get("evaluations") or {}:
            if name not in names:
                own.append(evaluation_plugin(name, f"study.evaluations.{name}"))
        return own

    def evaluations_for(self, label: str) -> list[IntervalEvaluation | MetricEvaluation]:
        """The evaluations that read the releases of roster entry ``label``: each applies to
        every method unless the config's ``evaluations.<name>.methods`` lists a subset. An
        entry of the benchmark's adapter (``synthesizer: tabular``, records) is read by every
        evaluation of records, listed or not: the lists keep other release kinds out (e.g. a
        model), and the benchmark adds no label to them (the study's config, and so its
        stored tasks, stay as they are)."""
        chosen = self.config.get("evaluations") or {}
        benchmarked = self.config["roster"].get(label, {}).get("synthesizer") == "tabular"
        out = []
        for ev in self.all_evaluations():
            methods = (chosen.get(ev.name) or {}).get("methods")
            if methods is None or label in methods or (benchmarked and "records" in ev.kinds):
                out.append(ev)
        return out

    def pool_sizes(self, label: str, m: int) -> list[int]:
        """The numbers of sets evaluations pool for roster entry ``label`` releasing ``m`` sets
        (nested m: ``pool_m`` in the roster entry; default ``[m]``)."""
        sizes = self.config["roster"][label].get("pool_m")
        if sizes is None:
            return [m]
        key = f"study.roster.{label}.pool_m"
        if isinstance(sizes, (int, str)) or not sizes:
            raise ConfigError(f"{key}: give a non-empty list of set counts, e.g. [1, 3, {m}]")
        for v in sizes:
            check_number(key, v, integer=True, minimum=1)
            if v > m:
                raise ConfigError(f"{key}: {v} exceeds the {m} sets the method releases "
                                  f"(allowed: 1..{m})")
        if list(sizes) != sorted(set(sizes)):
            raise ConfigError(f"{key}: give distinct counts in increasing order, got {sizes}")
        return [int(v) for v in sizes]

    def check_contract(self, methods: list[str], scenario: Scenario) -> None:
        """One-line errors, before anything runs, for a study whose parts do not fit together:
        an unknown privacy axis, a method that does not take it, an evaluation handed a release
        kind it does not support, evaluations config naming unknown evaluations or methods,
        repeated estimand or metric names, an invalid ``pool_m``."""
        axis = self.privacy_axis()
        if axis not in self.privacy_axes:
            raise allowed("study.privacy_axis", axis, self.privacy_axes)
        evaluations = self.all_evaluations()
        known = [e.name for e in evaluations]
        if len(set(known)) != len(known):
            raise ConfigError(f"study.evaluations: evaluation names repeat ({', '.join(known)})")
        chosen = self.config.get("evaluations") or {}
        if not isinstance(chosen, dict):
            raise ConfigError("study.evaluations: give a mapping of evaluation name to "
                              "{methods: [...]}")
        roster = list(self.config["roster"])
        for name, spec in chosen.items():
            for label in (spec or {}).get("methods") or []:
                if label not in roster:
                    raise allowed(f"study.evaluations.{name}.methods", label, roster)
        for label in methods:
            synth = self.synthesizer(label, scenario)
            if synth.private and synth.privacy_parameter != axis:
                raise ConfigError(f"study.privacy_axis: method {label} ({synth.name}) takes "
                                  f"{synth.privacy_parameter!r}, not {axis!r}")
            if synth.private:
                self._check_privacy_range(label, synth)
            for ev in self.evaluations_for(label):
                if synth.release_kind not in ev.kinds:
                    raise ConfigError(
                        f"study.evaluations.{ev.name}: does not support the {synth.release_kind!r}"
                        f" releases of method {label} (supports: {', '.join(ev.kinds)}); list "
                        f"the methods it reads in study.evaluations.{ev.name}.methods")
            self.pool_sizes(label, synth.m)
        names = []
        for ev in evaluations:
            if isinstance(ev, IntervalEvaluation):
                names += list(ev.estimands(scenario))
        if len(set(names)) != len(names):
            raise ConfigError(f"study.evaluations: estimand names repeat across evaluations "
                              f"({', '.join(names)})")

    def privacy_key(self) -> str:
        """The config key that gives the privacy values (for one-line errors)."""
        c = self.config
        if c.get("privacy_values") is not None or c.get("log_privacy_values") is not None:
            return "study.privacy_values" if c.get("privacy_values") is not None \
                else "study.log_privacy_values"
        return "study.epsilon" if c.get("epsilon") is not None else "study.log_epsilon"

    def _check_privacy_range(self, label: str, synth) -> None:
        """Every privacy value lies where the method's mechanisms stay finite."""
        lo, hi = synth.privacy_range()
        key = self.privacy_key()
        shown = f"[{lo:g}, {hi:g}]"
        if key.startswith("study.log_"):
            shown = f"logarithms in [{np.log(lo):.4g}, {np.log(hi):.4g}], values in {shown}"
        for value in self.privacy_values():
            if not lo <= value <= hi:
                raise ConfigError(
                    f"{key}: {value:g} is outside the range where the mechanisms of {label} "
                    f"({synth.name}) stay finite (allowed: {shown})")

    def validate_grid(self) -> None:
        """The config's grid has exactly the declared axes and every value meets its rule."""
        rules = type(self).grid_rules
        if not rules:
            raise ConfigError(f"study.module: {type(self).__name__} declares no grid_rules "
                              f"(every study declares the rule of each grid axis)")
        grid = self.config["grid"]
        if set(grid) != set(rules):
            raise ConfigError(f"study.grid: the axes of {self.name} are {', '.join(rules)}, got "
                              f"{', '.join(map(str, grid)) or 'none'}")
        for axis, rule in rules.items():
            key = f"study.grid.{axis}"
            if callable(rule):
                for value in grid[axis]:
                    rule(key, value)
            else:
                check_each(key, grid[axis], **rule)

    def validate(self) -> None:
        """Raise ConfigError for invalid study settings (called before anything is written)."""

    # --- the roster -----------------------------------------------------------------------------
    def roster_entry(self, label: str) -> tuple[str | None, dict]:
        """The synthesizer name and a copy of the parameters of roster entry ``label`` (without
        the engine's ``pool_m``); an unknown label is a one-line error naming the roster."""
        roster = self.config["roster"]
        if label not in roster:
            raise allowed("methods", label, list(roster))
        params = dict(roster[label])
        params.pop("pool_m", None)  # the engine's (nested m, ``pool_sizes``)
        return params.pop("synthesizer", None), params

    def built(self, label: str, scenario: Scenario) -> Synthesizer:
        """The synthesizer of roster entry ``label`` before calibration: the study's
        :meth:`method`, except for an entry of the benchmark's generic adapter (``synthesizer:
        tabular``, issue 24), which gets the study's data interface (:meth:`tabular_interface`)
        and privacy axis here, so no study's ``method`` needs to know of it."""
        name, params = self.roster_entry(label)
        if name != "tabular":
            return self.method(label, scenario)
        from ..benchmark.interface import pop_epsilon_per_privacy
        from ..synthesizers import make_synthesizer

        key = f"study.roster.{label}"
        spec = dict(params.pop("interface", None) or {})
        per_privacy = pop_epsilon_per_privacy(spec, scenario, f"{key}.interface")
        interface = self.tabular_interface(spec, scenario, f"{key}.interface")
        return make_synthesizer("tabular", key=key, interface=interface,
                                privacy_parameter=self.privacy_axis(),
                                epsilon_per_privacy=per_privacy, **params)

    def tabular_interface(self, spec: dict, scenario: Scenario, key: str):
        """The study's public discretisation for the benchmark's adapter, from ``spec`` (the
        study's ``benchmark.interface`` config: bins, bounds, columns, strata) and
        :meth:`tabular_schema`."""
        from ..benchmark.interface import TabularInterface

        return TabularInterface.from_config(spec, key, self.tabular_schema(scenario), scenario)

    def tabular_schema(self, scenario: Scenario):
        """The schema of the train records of ``scenario`` when they carry none and it depends
        on the scenario (public bounds set per scenario); None: the records' own schema, or the
        config's ``benchmark.interface.columns``."""
        return None

    # --- optional pieces read by the CLI --------------------------------------------------------
    # A study declares none of the methods below: its parts (claims, tables, figures, loop
    # oracle) are what its paper declares for it in ``<paper>/paper.py`` (``harness.paper``).
    def _parts(self):
        from ..paper import parts_of

        return parts_of(self)

    def claims(self):
        """The paper's conclusions as claims (the ``claims`` its paper declares)."""
        return list(self._parts().claims)

    def tables(self) -> dict:
        """name → :class:`harness.paper.Table`, for ``harness table`` (the ``tables`` its paper
        declares, each with the sweep inputs it reads)."""
        return dict(self._parts().tables)

    def figures(self) -> dict:
        """name → function(metrics) → matplotlib Figure, for ``harness plot`` (the ``figures``
        its paper declares)."""
        return dict(self._parts().figures)

    def loop_oracle(self):
        """Optional plain, record-level, one-replicate-at-a-time implementation of the study,
        kept as the test oracle of the vectorised path and timed by ``harness bench``:
        ``f(scenario, label, epsilon, rng, study_config) -> dict`` with the pooled estimate,
        variance, df, ci_low, ci_high and usable flag of one replicate (the ``loop`` its paper
        declares, or None)."""
        return self._parts().loop


def study_class(config: dict) -> type[Study]:
    """The class of the study that ``config`` (the ``study`` section) names by its module."""
    module_name = config.get("module")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"study.module: cannot import {module_name!r} ({exc})") from None
    return module.STUDY_CLASS


def load_study(config: dict) -> Study:
    study = study_class(config)(config)
    study.validate_grid()
    study.validate()
    return study
