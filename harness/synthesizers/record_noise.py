"""Record-level noise synthesizers, the competitors of DIP (spec 004 §2): the Laplace randomized
mechanism LRM (Dwork et al. 2006), the minimax optimal mechanisms OPM of Duchi, Jordan &
Wainwright (2018), and the exponential mechanism EXM (McSherry & Talwar 2007). Each releases the
full sample of n records.

LRM and OPM privatize every column separately ("naive" NLRM/NOPM for multivariate data) with
ε_col = ε/p for the p privatized columns: sequential composition gives ε. The sensitivity (LRM)
or bound (OPM) of a column is a public number or a rule on the data as the paper uses it
(``range`` = max − min, ``max`` = the [0, max] rule, ``symmetric`` = 2·max|Z|, spec §2 table);
a rule read from the data being released is *not* covered by the guarantee, which the ledger
note says. ``response``: the regression route of spec §2 (A11): the other columns are
privatized first, Y is regressed on them (OLS with intercept), the residuals r = Y − Ŷ are
privatized with the ``response_sensitivity`` rule and Ỹ = Ŷ + r̃ is released. For LRM this is
exactly Ỹ = Y + Laplace(2·max|r|/ε_col) (the fitted values cancel); for OPM Ŷ is a non-private
function of every Y, so the ε claim does not cover that column (ledger note).
``round_to``: columns rounded to the nearest point of a public grid (edges clip), e.g. ratings
or a binary response (post-processing).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..inference.regression import ols_fitted
from ..privacy import exponential_mechanism, laplace_mechanism
from ..privacy.ledger import SUBSTITUTION
from ..privacy.minimax import l2_ball_mechanism, linf_mean_mechanism, truncation_level
from ..validation import check_number
from .base import SetwiseSynthesizer
from .dip import RecordsInput, check_records
from .registry import register

SENSITIVITY_RULES = ("range", "max", "symmetric")
OPM_VARIANTS = ("l2_vector", "l2_scalar", "mean_linf")
OPM_BOUNDS = ("max_abs", "moment")
EXM_QUALITIES = ("count", "proportion")
DATA_RULE_NOTE = "sensitivity read from the released data ({}): not covered by the ε guarantee"
FLOOR = np.finfo(float).tiny  # a rule giving 0 (a constant column) still needs a scale > 0


def _rule(key: str, value, rules):
    if isinstance(value, str):
        if value not in rules:
            raise allowed(key, value, (*rules, "a number > 0"))
        return value
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0):
        raise allowed(key, value, (*rules, "a number > 0"))
    return float(value)


def data_sensitivity(rule, z: np.ndarray) -> np.ndarray:
    """Δ per replicate (R, 1) of a column z (R, n) by ``rule`` (spec §2 table), or the number."""
    if not isinstance(rule, str):
        return np.full((z.shape[0], 1), float(rule))
    if rule == "range":
        out = z.max(axis=1) - z.min(axis=1)
    elif rule == "max":
        out = z.max(axis=1)
    else:
        out = 2.0 * np.abs(z).max(axis=1)
    return np.maximum(out, FLOOR)[:, None]


def round_to_grid(z, grid) -> np.ndarray:
    """The nearest point of the increasing ``grid`` (ties to the lower point; edges clip)."""
    g = np.asarray(grid, dtype=float)
    k = np.clip(np.searchsorted(g, z), 1, g.size - 1)
    lower, upper = g[k - 1], g[k]
    return np.where(z - lower <= upper - z, lower, upper) if g.size > 1 else np.full_like(z, g[0])


class _ColumnNoise(RecordsInput, SetwiseSynthesizer):
    """Column-wise record noise with ε/p per column, the residual route and grid rounding."""

    neighbour_relation = SUBSTITUTION
    rules: tuple = SENSITIVITY_RULES

    #: the name of the per-column rule parameter (LRM: sensitivity, OPM: bound)
    rule_key = "sensitivity"

    def __init__(self, m: int, sensitivity, response, response_sensitivity, round_to):
        super().__init__(m)
        if isinstance(sensitivity, Sequence) and not isinstance(sensitivity, str):
            self.sensitivity = [_rule(f"{self.rule_key}[{j}]", s, self.rules)
                                for j, s in enumerate(sensitivity)]
        else:
            self.sensitivity = _rule(self.rule_key, sensitivity, self.rules)
        if response is not None:
            check_number("response", response, integer=True, minimum=0)
        self.response = None if response is None else int(response)
        self.response_sensitivity = _rule("response_sensitivity", response_sensitivity,
                                          self.rules)
        if round_to is not None and not isinstance(round_to, Mapping):
            raise ConfigError("round_to: give a mapping of column index to a grid of values")
        self.round_to = {int(k): sorted(float(g) for g in v)
                         for k, v in (round_to or {}).items()}

    def _rules(self, p: int) -> list:
        given = self.sensitivity
        if isinstance(given, list):
            if len(given) != p:
                raise ConfigError(f"{self.rule_key}: give one rule or a list of {p} (one per "
                                  f"column)")
            return given
        return [given] * p

    def _privatize(self, z, rule, eps_col, rng, ledger, statistic, note) -> np.ndarray:
        raise NotImplementedError

    def _one_set(self, data, eps_set, ledger, rng, j):
        values = check_records("data", data).values
        _, _, p = values.shape
        if self.response is not None and self.response >= p:
            raise ConfigError(f"response: column {self.response} of {p} columns")
        bad = [k for k in self.round_to if not 0 <= k < p]
        if bad:
            raise ConfigError(f"round_to: column {bad[0]} of {p} columns")
        rules = self._rules(p)
        eps_col = eps_set / p
        out = np.empty_like(values)
        for col in range(p):
            if col != self.response:
                out[..., col] = self._privatize(values[..., col], rules[col], eps_col, rng,
                                                ledger, f"set {j + 1}: column {col} records", "")
        if self.response is not None:
            y = values[..., self.response]
            others = (out[..., :-1] if self.response == p - 1  # a view: no copy
                      else np.delete(out, self.response, axis=-1))
            fitted = ols_fitted(others, y)
            out[..., self.response] = fitted + self._privatize(
                y - fitted, self.response_sensitivity, eps_col, rng, ledger,
                f"set {j + 1}: residuals of column {self.response} on the privatized columns",
                self._response_note)
        for col, grid in self.round_to.items():
            out[..., col] = round_to_grid(out[..., col], grid)
        return RecordBatch(out, columns=data.columns, schema=data.schema), {}

    _response_note = ""


@register
class LaplaceRecords(_ColumnNoise):
    """LRM: Z̃_i = Z_i + Laplace(Δ/ε_col) for every record of every column (spec §2)."""

    name = "lrm"
    _response_note = "Y~ = Y-hat + r~ = Y + Laplace(2 max|r| / eps_col) exactly"

    def __init__(self, m: int = 1, sensitivity="range", response: int | None = None,
                 response_sensitivity="symmetric", round_to=None):
        super().__init__(m, sensitivity, response, response_sensitivity, round_to)

    def _privatize(self, z, rule, eps_col, rng, ledger, statistic, note):
        extra = DATA_RULE_NOTE.format(rule) if isinstance(rule, str) else ""
        note = "; ".join(s for s in (note, extra) if s)
        return laplace_mechanism(z, sensitivity=data_sensitivity(rule, z), epsilon=eps_col,
                                 rng=rng, ledger=ledger, statistic=statistic, note=note)


@register
class MinimaxRecords(_ColumnNoise):
    """OPM (Duchi, Jordan & Wainwright 2018; spec §2): ``variant`` ``l2_vector`` (§4.2.3 on the
    whole column as one vector, d = n, radius √n·bound; A12), ``l2_scalar`` (§4.2.3 per record,
    d = 1, the same radius √n·bound) or ``mean_linf`` (§3.2.1: clip to [−T, T] plus
    Laplace(2T/ε_col), T = r(nε_col²)^{1/(2k)}, r = ``bound``; k = ``moment_k``, ∞ gives T = r).
    ``bound``: a public number, ``max_abs`` (max|Z_i|, the paper's) or ``moment``
    ((mean|Z|^k)^{1/k}, finite k only; spec §6 A13)."""

    name = "opm"
    rules = OPM_BOUNDS
    rule_key = "bound"
    _response_note = ("the fitted values Y-hat use every original Y: the response column is not "
                      "covered by the eps claim")

    def __init__(self, m: int = 1, variant: str = "l2_vector", bound="max_abs",
                 moment_k: float = math.inf, response: int | None = None,
                 response_sensitivity="max_abs", round_to=None):
        if variant not in OPM_VARIANTS:
            raise allowed("variant", variant, OPM_VARIANTS)
        self.variant = variant
        k = float(moment_k)
        if not k > 0:
            raise ConfigError(f"moment_k: must be a number > 0 (or inf), got {moment_k!r}")
        self.moment_k = k
        super().__init__(m, bound, response, response_sensitivity, round_to)
        given = self.sensitivity if isinstance(self.sensitivity, list) else [self.sensitivity]
        if math.isinf(k) and "moment" in given:
            raise ConfigError("bound: 'moment' needs a finite moment_k")

    def _bound(self, rule, z):
        if not isinstance(rule, str):
            return np.full(z.shape[0], float(rule))
        if rule == "max_abs":
            out = np.abs(z).max(axis=1)
        else:
            out = np.mean(np.abs(z) ** self.moment_k, axis=1) ** (1.0 / self.moment_k)
        return np.maximum(out, FLOOR)

    def _privatize(self, z, rule, eps_col, rng, ledger, statistic, note):
        extra = DATA_RULE_NOTE.format(rule) if isinstance(rule, str) else ""
        note = "; ".join(s for s in (note, extra) if s)
        bound = self._bound(rule, z)  # (R,)
        n = z.shape[1]
        if self.variant == "mean_linf":
            t = truncation_level(bound, n, eps_col, self.moment_k)[:, None]
            return linf_mean_mechanism(z, truncation=t, epsilon=eps_col, rng=rng, ledger=ledger,
                                       statistic=statistic, note=note)
        radius = math.sqrt(n) * bound
        if self.variant == "l2_vector":
            return l2_ball_mechanism(z, radius=radius, epsilon=eps_col, rng=rng, ledger=ledger,
                                     statistic=statistic, note=note)
        out = l2_ball_mechanism(z[..., None], radius=radius[:, None], epsilon=eps_col, rng=rng,
                                ledger=ledger, statistic=statistic, note=note)
        return out[..., 0]


@register
class ExponentialRecords(RecordsInput, SetwiseSynthesizer):
    """EXM (spec §2): n i.i.d. draws from the candidates a with P(a) ∝ exp(ε_draw·q(a)/(2Δ)),
    q(a) the count n_a (``quality="count"``) or n_a/n (``"proportion"``), Δ the sample maximum
    (``sensitivity="max"``, the paper's approximation) or a public number; candidates the
    observed distinct values (``support="observed"``, the paper's) or a public list.

    Privacy parameter ``epsilon_draw``: the ε of one draw, as the paper sets it. A release of n
    draws composes sequentially, so it claims n·ε_draw (the ledger records the n draws as one
    entry of n·ε_draw/m per set). The guarantee needs Δ ≥ the score's sensitivity (1 for counts,
    1/n for proportions, substitution) and candidates that do not depend on the data: the
    observed support and the sample-maximum Δ are noted as not covered. One column only."""

    name = "exm"
    privacy_parameter = "epsilon_draw"
    neighbour_relation = SUBSTITUTION

    def __init__(self, m: int = 1, quality: str = "count", support="observed",
                 sensitivity="max"):
        super().__init__(m)
        if quality not in EXM_QUALITIES:
            raise allowed("quality", quality, EXM_QUALITIES)
        self.quality = quality
        if isinstance(support, str):
            if support != "observed":
                raise allowed("support", support, ("observed", "a list of values"))
        elif not isinstance(support, Sequence) or len(support) == 0:
            raise allowed("support", support, ("observed", "a list of values"))
        self.support = support if isinstance(support, str) else tuple(float(a) for a in support)
        self.sensitivity = _rule("sensitivity", sensitivity, ("max",))

    def claimed_epsilon(self, privacy, data=None) -> float:
        return float(privacy) * data.n

    def _one_set(self, data, eps_set, ledger, rng, j):
        values = check_records("data", data).values
        if values.shape[-1] != 1:
            raise ConfigError(f"data: exm releases one column, got {values.shape[-1]}")
        z = values[..., 0]
        R, n = z.shape
        observed = self.support == "observed"
        candidates = np.unique(z) if observed else np.asarray(self.support)
        counts = (z[..., None] == candidates).sum(axis=1).astype(float)  # (R, K)
        q = counts if self.quality == "count" else counts / n
        delta = data_sensitivity("max", z)[:, 0] if self.sensitivity == "max" else \
            np.full(R, self.sensitivity)
        scores = q / delta[:, None]
        if observed:
            scores = np.where(counts > 0, scores, -np.inf)
        which = "the sample maximum" if self.sensitivity == "max" else f"{self.sensitivity:g}"
        notes = [f"scores q/Δ with Δ = {which}"]
        if observed or self.sensitivity == "max":
            notes.append("candidates or Δ read from the released data: not covered by the claim")
        pick = exponential_mechanism(
            np.broadcast_to(scores[:, None, :], (R, n, candidates.size)), sensitivity=1.0,
            epsilon=eps_set, rng=rng, ledger=_Noted(ledger, "; ".join(notes)),
            statistic=f"set {j + 1}: {self.quality} scores, {n} draws", draws_axis=1)
        out = candidates[pick][..., None]
        return RecordBatch(out, columns=data.columns, schema=data.schema), {}


class _Noted:
    """A ledger view that appends ``note`` to every entry recorded through it."""

    def __init__(self, ledger, note: str):
        self.ledger, self.note = ledger, note

    @property
    def relation(self):
        return self.ledger.relation

    def record(self, entry):
        self.ledger.record(replace(entry, note="; ".join(s for s in (entry.note, self.note) if s)))
