"""The Study protocol: what the engine knows of a study (DESIGN §3). Studies live in
``experiments/`` and are found through the ``module`` key of their config."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping

import numpy as np

from ..errors import ConfigError, allowed
from ..inference import Pooled
from ..synthesizers import Release, Synthesizer
from ..validation import check_each

Scenario = Mapping[str, object]


class Study(ABC):
    """A simulation study: a grid of scenarios, a data-generating process, estimands with true
    values, an analysis of each released set, and a roster of methods.

    Subclasses receive the (validated) study config as a plain dict.
    """

    name: str
    #: The study's grid axes and the rule every value of each must meet (DESIGN §7), enforced by
    #: the engine before :meth:`validate`, so no study can forget to check its grid. A rule is
    #: the keyword arguments of :func:`harness.validation.check_number` (``{"integer": True,
    #: "minimum": 2}``) or a callable ``rule(key, value)`` raising ConfigError. A study class
    #: that declares no rules cannot be loaded.
    grid_rules: dict[str, dict | Callable] = {}
    #: study-level keys a config may set, besides the common ones in ``COMMON_KEYS``
    extra_keys: tuple[str, ...] = ()
    COMMON_KEYS = (
        "name", "module", "replicates", "grid", "log_epsilon", "epsilon", "roster",
        "combining_rule", "discard_unusable",
    )

    def __init__(self, config: dict):
        self.config = config
        self.name = config["name"]

    # --- grid -------------------------------------------------------------------------------
    def grid_axes(self) -> dict[str, list]:
        return {k: list(v) for k, v in self.config["grid"].items()}

    def epsilons(self) -> list[float]:
        if self.config.get("epsilon") is not None:
            return [float(e) for e in self.config["epsilon"]]
        return [float(np.exp(x)) for x in self.config["log_epsilon"]]

    def log_epsilon_of(self, epsilon: float) -> float:
        if self.config.get("epsilon") is None:
            for x in self.config["log_epsilon"]:
                if float(np.exp(x)) == epsilon:
                    return float(x)
        return float(np.log(epsilon))

    # --- the study proper ---------------------------------------------------------------------
    @abstractmethod
    def generate(self, scenario: Scenario, rng: np.random.Generator, n_replicates: int):
        """A batch of ``n_replicates`` original data sets."""

    @abstractmethod
    def estimands(self, scenario: Scenario) -> dict[str, float]:
        """Estimand names (in analysis order) and their true values."""

    @abstractmethod
    def analyse(self, sets, scenario: Scenario) -> tuple[np.ndarray, np.ndarray]:
        """Estimates and within-set variances, shape (R, m, E), of sets with axes (R, m, ...)."""

    @abstractmethod
    def method(self, label: str, scenario: Scenario) -> Synthesizer:
        """The configured synthesizer of roster entry ``label``."""

    def usable(self, release: Release, pooled: Pooled) -> np.ndarray:
        """Per (replicate, estimand) usability; default: the pooled variance T is positive."""
        return pooled.usable

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

    def replicate_metrics(self, release: Release, scenario: Scenario) -> dict[str, np.ndarray]:
        """Optional per-replicate metrics of targets that are not estimands with intervals
        (prediction accuracy, TVD, ...; DESIGN §4): metric name → values of shape (R,). They are
        stored as a third table (study, scenario, method, ε, replicate, metric, value) and
        summarised by mean, SD and Monte Carlo SE. Default: none."""
        return {}

    # --- the roster -----------------------------------------------------------------------------
    def roster_entry(self, label: str) -> tuple[str | None, dict]:
        """The synthesizer name and a copy of the parameters of roster entry ``label``; an
        unknown label is a one-line error naming the roster."""
        roster = self.config["roster"]
        if label not in roster:
            raise allowed("methods", label, list(roster))
        params = dict(roster[label])
        return params.pop("synthesizer", None), params

    # --- optional pieces read by the CLI --------------------------------------------------------
    # A study declares none of the methods below: its parts (claims, tables, figures, loop
    # oracle) are what its paper declares for it in ``<paper>/paper.py`` (``harness.paper``).
    def _parts(self):
        from ..paper import parts_of

        return parts_of(self)

    def claims(self):
        """The paper's conclusions as claims (the ``claims`` its paper declares)."""
        return list(self._parts().claims)

    #: what the functions of ``tables()`` read: "rows" (the per-replicate result rows) or
    #: "replicate_metrics" (the per-replicate metric rows of ``replicate_metrics``)
    table_input: str = "rows"

    def tables(self) -> dict:
        """name → function(rows) → DataFrame, for ``harness table`` (the ``tables`` its paper
        declares; rows: the per-replicate result rows of the sweep, or its metric rows, see
        ``table_input``). A function with a ``diagnostics`` parameter also receives the sweep's
        per-replicate release diagnostics (e.g. bin counts per cell)."""
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


def load_study(config: dict) -> Study:
    module_name = config.get("module")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"study.module: cannot import {module_name!r} ({exc})") from None
    study = module.STUDY_CLASS(config)
    study.validate_grid()
    study.validate()
    return study
