"""Building blocks of distribution-invariant privatization (Bi & Shen, "Distribution-invariant
differential privacy"; spec 004 §1.2–§1.5, §6): the CDF G of U + Laplace, continualization of
discrete and mixed variables and the ceiling back, and the smoothed empirical CDF of a hold-out
sample. The mechanism itself (noise, ledger, multivariate chain) is in :mod:`.dip`.

Everything is vectorised over leading axes (replicates, records); the last axis of a knot array
is the knot axis.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, allowed

COLUMN_KINDS = ("continuous", "discrete", "mixed")
D0_RULES = ("mean_spacing", "d1_minus_1", "zero")
#: G is clipped into [TINY, 1 − TINY] before an inverse CDF so that an unbounded F never gets 0
#: or 1 (G underflows only beyond |noise| ≈ 700·b, a probability below e^{-700})
TINY = np.finfo(float).tiny


# ----------------------------------------------------------------------------- G (App. S1.1)


def uniform_laplace_cdf(x, b) -> np.ndarray:
    """G(x) = P(U + e ≤ x), U ~ Unif(0, 1) independent of e ~ Laplace(0, b) (paper App. S1.1,
    spec §1.2):

        G(x) = (b/2) e^{x/b} (1 − e^{−1/b})                 x < 0
             = x + (b/2) e^{−x/b} − (b/2) e^{(x−1)/b}       0 ≤ x ≤ 1
             = 1 − (b/2) e^{−(x−1)/b} (1 − e^{−1/b})         x > 1

    1 − e^{−1/b} is computed as −expm1(−1/b). Above 1/2 use :func:`uniform_laplace_sf`, the
    survival S(x) = 1 − G(x) = G(1 − x) (U + e is symmetric about 1/2), which keeps its relative
    precision in the upper tail."""
    x = np.asarray(x, dtype=float)
    b = np.asarray(b, dtype=float)
    if b.ndim == 0 and x.size > CHUNK:
        return _flat_chunks(uniform_laplace_cdf, x, b)
    mass = -np.expm1(-1.0 / b)
    if b.ndim == 0:  # each piece on its own elements only (elementwise: the same bits)
        out = np.empty(x.shape)
        low, high = x < 0, x > 1
        mid = ~(low | high)
        for where, piece in ((low, _below), (mid, _inside), (high, _above)):
            out[where] = piece(x[where], b, mass)
        return out
    return np.where(x < 0, _below(x, b, mass),
                    np.where(x > 1, _above(x, b, mass), _inside(x, b, mass)))


def _below(x, b, mass):
    return 0.5 * b * np.exp(np.minimum(x, 0.0) / b) * mass


def _inside(x, b, mass):
    return (np.clip(x, 0.0, 1.0) + 0.5 * b * np.exp(-np.clip(x, 0.0, 1.0) / b)
            - 0.5 * b * np.exp((np.clip(x, 0.0, 1.0) - 1.0) / b))


def _above(x, b, mass):
    with np.errstate(over="ignore"):
        return 1.0 - 0.5 * b * np.exp(-np.maximum(x - 1.0, 0.0) / b) * mass


def uniform_laplace_sf(x, b) -> np.ndarray:
    """S(x) = 1 − G(x) = G(1 − x) (symmetry of U + e about 1/2; spec §1.2 numerics)."""
    return uniform_laplace_cdf(1.0 - np.asarray(x, dtype=float), b)


def noisy_level(w, b) -> tuple[np.ndarray, np.ndarray]:
    """(G(w), 1 − G(w)) for the noisy uniform w = u + e, each clipped into [TINY, 1 − TINY]; the
    first is exact below 1/2 and the second above (use it with an inverse survival function)."""
    s = np.clip(uniform_laplace_sf(w, b), TINY, 1.0 - np.finfo(float).epsneg)
    return noisy_cdf_level(w, b), s


def noisy_cdf_level(w, b) -> np.ndarray:
    """G(w) of :func:`noisy_level` alone (for an inverse that needs no survival function)."""
    w = np.asarray(w, dtype=float)
    if np.ndim(b) == 0 and w.size > CHUNK:
        return _flat_chunks(noisy_cdf_level, w, b)
    return np.clip(uniform_laplace_cdf(w, b), TINY, 1.0 - np.finfo(float).epsneg)


# ----------------------------------------------------------------------------- chunks

#: elementwise steps on large arrays run on chunks of about this many values, so that their
#: temporaries stay in the CPU cache (2-4x faster on 10^6 values); every step is elementwise
#: (per value, or per value and its row's knots), so the numbers are the same
CHUNK = 16384


def _flat_chunks(fn, x: np.ndarray, *args) -> np.ndarray:
    """fn(x, *args) of an elementwise ``fn``, computed on consecutive chunks of the flat x."""
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(flat.shape)
    for start in range(0, flat.size, CHUNK):
        out[start:start + CHUNK] = fn(flat[start:start + CHUNK], *args)
    return out.reshape(x.shape)


def _row_chunks(fn, knots: np.ndarray, *values: np.ndarray) -> np.ndarray:
    """fn(knots, *values) for a ``fn`` that maps each value through its row's knots, ``knots``
    (..., K) and every values array (..., n) sharing their leading axes: computed on pieces of
    about :data:`CHUNK` values (whole rows, or chunks of one long row)."""
    n = values[0].shape[-1]
    rows = knots.reshape(-1, knots.shape[-1])
    flat = [np.asarray(v).reshape(rows.shape[0], n) for v in values]
    out = np.empty(flat[0].shape)
    if n >= CHUNK:
        pieces = [(slice(i, i + 1), slice(s, s + CHUNK)) for i in range(rows.shape[0])
                  for s in range(0, n, CHUNK)]
    else:
        step = max(1, CHUNK // n)
        pieces = [(slice(i, i + step), slice(None)) for i in range(0, rows.shape[0], step)]
    for r, c in pieces:
        out[r, c] = fn(rows[r], *(v[r, c] for v in flat))
    return out.reshape(values[0].shape)


def _chunkable(knots: np.ndarray, x: np.ndarray) -> bool:
    """Knots and values of matching leading axes and more than one chunk of values."""
    return knots.ndim == x.ndim and knots.shape[:-1] == x.shape[:-1] and x.size > CHUNK


# ----------------------------------------------------------------------------- column kinds


@dataclass(frozen=True)
class ColumnKind:
    """How a column is continualized (spec §7.3 ``ColumnSchema``): ``continuous``;
    ``discrete`` on the public support ``support`` (a finite increasing list a_1 < … < a_s) or
    on the infinite lattice a_1, a_1 + step, … (``support`` None, ``start`` a_1 and ``step``),
    with a_0 = ``a0`` (default a_1 − 1, spec §1.7: the public lattice, never the private
    values); or ``mixed`` with the jump points ``jumps`` (eq. (5)–(6))."""

    kind: str = "continuous"
    support: tuple[float, ...] | None = None
    start: float | None = None
    step: float = 1.0
    a0: float | None = None
    jumps: tuple[float, ...] = ()

    @property
    def first(self) -> float:
        return float(self.support[0]) if self.support is not None else float(self.start)

    @property
    def lower_end(self) -> float:
        """a_0 of a discrete column."""
        return self.first - 1.0 if self.a0 is None else float(self.a0)


def column_kind(key: str, spec) -> ColumnKind:
    """A :class:`ColumnKind` from a config value: ``"continuous"``, ``{"kind": "discrete",
    "support": [...], "a0": ...}``, ``{"kind": "discrete", "start": 0, "step": 1}`` (an
    infinite lattice, e.g. counts) or ``{"kind": "mixed", "jumps": [...]}``; a one-line
    ConfigError naming ``key`` otherwise."""
    if isinstance(spec, ColumnKind):
        return spec
    if isinstance(spec, str):
        spec = {"kind": spec}
    if not isinstance(spec, Mapping) or spec.get("kind") not in COLUMN_KINDS:
        got = spec.get("kind") if isinstance(spec, Mapping) else spec
        raise allowed(f"{key}.kind", got, COLUMN_KINDS)
    kind = spec["kind"]
    extra = set(spec) - {"continuous": {"kind"}, "discrete": {"kind", "support", "start", "step",
                                                              "a0"},
                         "mixed": {"kind", "jumps"}}[kind]
    if extra:
        raise ConfigError(f"{key}.{sorted(extra)[0]}: not a setting of a {kind} column")
    if kind == "continuous":
        return ColumnKind()
    if kind == "mixed":
        jumps = tuple(float(a) for a in spec.get("jumps") or ())
        if not jumps or any(np.diff(jumps) <= 0):
            raise ConfigError(f"{key}.jumps: give the jump points in increasing order, got "
                              f"{spec.get('jumps')!r}")
        return ColumnKind("mixed", jumps=jumps)
    if ("support" in spec) == ("start" in spec):
        raise ConfigError(f"{key}: a discrete column needs exactly one of support: [a_1, ...] "
                          f"or start: a_1 (with step, an infinite lattice)")
    step = float(spec.get("step", 1.0))
    if not step > 0:
        raise ConfigError(f"{key}.step: must be a number > 0, got {spec.get('step')!r}")
    support = None
    if "support" in spec:
        support = tuple(float(a) for a in spec["support"])
        if not support or any(np.diff(support) <= 0):
            raise ConfigError(f"{key}.support: give the support in increasing order, got "
                              f"{spec['support']!r}")
    a0 = spec.get("a0")
    out = ColumnKind("discrete", support, None if support else float(spec["start"]), step,
                     None if a0 is None else float(a0))
    if not out.lower_end < out.first:
        raise ConfigError(f"{key}.a0: must be below the first support point {out.first}, "
                          f"got {a0!r}")
    return out


def column_kinds(key: str, specs, p: int) -> tuple[ColumnKind, ...]:
    """One kind per column: None (all continuous), one spec for every column, or a list of p."""
    if specs is None:
        return (ColumnKind(),) * p
    if isinstance(specs, (str, Mapping, ColumnKind)):
        return (column_kind(key, specs),) * p
    if not isinstance(specs, Sequence) or len(specs) != p:
        raise ConfigError(f"{key}: give one column kind or a list of {p} (one per column)")
    return tuple(column_kind(f"{key}[{j}]", s) for j, s in enumerate(specs))


# ----------------------------------------------------------------------------- continualization


def _previous_support_point(kind: ColumnKind, z: np.ndarray) -> np.ndarray:
    """a_{k−1} for values z = a_k of a discrete column (a_0 for the first point)."""
    if kind.support is None:
        prev = z - kind.step
        return np.where(z <= kind.first, kind.lower_end, prev)
    points = np.asarray((kind.lower_end, *kind.support))
    k = np.searchsorted(points, z)  # z = a_k exactly
    return points[np.maximum(k - 1, 0)]


def check_on_support(key: str, kind: ColumnKind, z: np.ndarray) -> None:
    """Refuse values of a discrete column off its public support (one line naming ``key``)."""
    if kind.kind != "discrete":
        return
    if kind.support is None:
        k = (z - kind.first) / kind.step
        bad = (k < -1e-9) | (np.abs(k - np.round(k)) > 1e-9)
    else:
        bad = ~np.isin(z, np.asarray(kind.support))
    if bad.any():
        raise ConfigError(f"{key}: value {float(z[bad].flat[0])!r} is not on the column's "
                          f"public support")


def _mixed_shift(jumps: np.ndarray) -> tuple[np.ndarray, int]:
    """k of every jump (a_0 the first non-negative jump, eq. (5)) and its list offset j0."""
    j0 = int(np.searchsorted(jumps, 0.0, side="left"))
    return np.arange(jumps.size) - j0, j0


def continualize(z, kind: ColumnKind, rng: np.random.Generator) -> np.ndarray:
    """V = continualized Z (spec §1.3–§1.4).

    * discrete (eq. (3), Lemma S1): Z = a_k → V = Z − U·(a_k − a_{k−1}), U ~ Unif[0, 1), so V ~
      Unif(a_{k−1}, a_k] and F_V(a_k) = F(a_k);
    * mixed (eq. (5)): Z = a_k → V = Z + k − U with U ~ Unif(0, 1] (the unit interval; the
      paper's (0, a_k − a_{k−1}] contradicts it, spec §1.4 [resolution]); Z ∈ (a_k, a_{k+1}) →
      V = Z + k; below the first jump the shift is k_min − 1, above the last k_max;
    * continuous: V = Z."""
    z = np.asarray(z, dtype=float)
    if kind.kind == "continuous":
        return z.copy()
    if kind.kind == "discrete":
        width = z - _previous_support_point(kind, z)
        return z - rng.random(z.shape) * width
    jumps = np.asarray(kind.jumps)
    k, j0 = _mixed_shift(jumps)
    below = np.searchsorted(jumps, z, side="left")  # number of jumps < z
    at = (below < jumps.size) & (jumps[np.minimum(below, jumps.size - 1)] == z)
    shift_cont = below - 1 - j0
    u = 1.0 - rng.random(z.shape)  # Unif(0, 1]
    return np.where(at, z + k[np.minimum(below, jumps.size - 1)] - u, z + shift_cont)


def ceiling_back(v, kind: ColumnKind) -> np.ndarray:
    """The map back to the original scale (spec §1.3–§1.4, §1.7 pitfall): the generalized
    ceiling L̄(x) = inf{a_k ∈ support : a_k ≥ x} for a discrete column (every x ≤ a_1 maps to
    a_1, every x above the last support point to the last point), L_0 of eq. (6) for a mixed
    column, the identity for a continuous one."""
    v = np.asarray(v, dtype=float)
    if kind.kind == "continuous":
        return v
    if kind.kind == "discrete":
        if kind.support is None:
            k = np.ceil((v - kind.first) / kind.step - 1e-12)
            return kind.first + np.maximum(k, 0.0) * kind.step
        points = np.asarray(kind.support)
        return points[np.minimum(np.searchsorted(points, v, side="left"), points.size - 1)]
    jumps = np.asarray(kind.jumps)
    k, _ = _mixed_shift(jumps)
    right = jumps + k  # atom a_j occupies [a_j + k_j − 1, a_j + k_j]
    j = np.searchsorted(right, v, side="left")  # first atom interval whose right end ≥ v
    jc = np.minimum(j, jumps.size - 1)
    in_atom = (j < jumps.size) & (v >= right[jc] - 1.0)
    shift = np.where(j >= jumps.size, k[-1], k[jc] - 1)
    return np.where(in_atom, jumps[jc], v - shift)


# ----------------------------------------------------------------------------- smoothed ECDF


def ecdf_knots(holdout_v, d0: str = "mean_spacing") -> np.ndarray:
    """Knots d_0 < d_1 ≤ … ≤ d_m of the smoothed ECDF Ĉ (eq. (7), spec §1.5) along the last
    axis: the order statistics of the (continualized) hold-out and d_0 by rule ``d0`` (the
    paper leaves it undefined, spec §6 A1): ``mean_spacing`` d_1 − (d_m − d_1)/(m − 1),
    ``d1_minus_1`` d_1 − 1, ``zero`` 0 (for positive data)."""
    if d0 not in D0_RULES:
        raise allowed("d0", d0, D0_RULES)
    d = np.sort(np.asarray(holdout_v, dtype=float), axis=-1)
    m = d.shape[-1]
    if m < 2:
        raise ConfigError(f"holdout: the smoothed ECDF needs at least 2 hold-out records, got {m}")
    first, last = d[..., :1], d[..., -1:]
    if d0 == "mean_spacing":
        lower = first - (last - first) / (m - 1)
    elif d0 == "d1_minus_1":
        lower = first - 1.0
    else:
        lower = np.zeros_like(first)
    if np.any(lower >= first):
        raise ConfigError(f"d0: rule {d0!r} does not lie below the smallest hold-out value")
    return np.concatenate([lower, d], axis=-1)


def ecdf_cell(knots, x) -> np.ndarray:
    """k with d_{k−1} < x ≤ d_k (1..m), 0 for x ≤ d_0 and m + 1 for x > d_m; ``knots`` (..., m+1)
    and ``x`` (..., n) share leading axes."""
    return _searchsorted_batched(knots, x)


def ecdf_cdf(knots, x, cell=None) -> np.ndarray:
    """Ĉ(x) = (k − 1)/m + (x − d_{k−1}) / (m (d_k − d_{k−1})) for x ∈ (d_{k−1}, d_k]; 0 below
    d_0 and 1 above d_m (eq. (7)). Ties in the knots never divide by zero here (x ∈ (d_{k−1},
    d_k] has d_k > d_{k−1}), but they make atoms: see ``_check_ties`` in :mod:`.dip`. ``cell``:
    :func:`ecdf_cell` of (knots, x) when the caller has it already (it is not recomputed)."""
    knots = np.asarray(knots, dtype=float)
    x = np.asarray(x, dtype=float)
    if knots.ndim == 1 and x.ndim != 1:  # one set of knots, values of any shape
        cell = None if cell is None else np.asarray(cell).reshape(-1)
        return ecdf_cdf(knots, x.reshape(-1), cell).reshape(x.shape)
    k = ecdf_cell(knots, x) if cell is None else np.asarray(cell)
    if _chunkable(knots, x):
        return _row_chunks(_ecdf_cdf_at, knots, x, k)
    return _ecdf_cdf_at(knots, x, k)


def _ecdf_cdf_at(knots, x, k) -> np.ndarray:
    """Ĉ(x) of :func:`ecdf_cdf` given the cells k."""
    m = knots.shape[-1] - 1
    kc = np.clip(k, 1, m)
    lo = take_last(knots, kc - 1)
    hi = take_last(knots, kc)
    frac = np.clip((x - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0, 1.0)
    c = (kc - 1 + frac) / m
    return np.where(k == 0, 0.0, np.where(k > m, 1.0, c))


def ecdf_ppf(knots, g) -> np.ndarray:
    """Ĉ⁻¹(g): t = g·m, k = ⌈t⌉ clipped to [1, m], x = d_{k−1} + (t − (k−1))(d_k − d_{k−1})
    (spec §1.5). Values lie in (d_0, d_m] for g ∈ (0, 1]."""
    knots = np.asarray(knots, dtype=float)
    g = np.asarray(g, dtype=float)
    if knots.ndim == 1 and g.ndim != 1:
        return ecdf_ppf(knots, g.reshape(-1)).reshape(g.shape)
    if _chunkable(knots, g):
        return _row_chunks(_ecdf_ppf, knots, g)
    return _ecdf_ppf(knots, g)


def _ecdf_ppf(knots, g) -> np.ndarray:
    m = knots.shape[-1] - 1
    t = g * m
    k = np.clip(np.ceil(t).astype(np.int64), 1, m)
    lo = take_last(knots, k - 1)
    hi = take_last(knots, k)
    return lo + (t - (k - 1)) * (hi - lo)


def take_last(a, index) -> np.ndarray:
    """``np.take_along_axis(a, index, axis=-1)`` (the same values), for ``a`` (..., K) and
    ``index`` (..., n) with equal leading axes by one flat index per value, which is several
    times faster than numpy's broadcast index tuples on (replicate, record) arrays."""
    a = np.asarray(a)
    index = np.asarray(index)
    if a.ndim == 1 and index.ndim == 1:
        return a[index]
    if a.ndim != index.ndim or a.shape[:-1] != index.shape[:-1]:
        return np.take_along_axis(a, index, axis=-1)
    lead, k = a.shape[:-1], a.shape[-1]
    base = (np.arange(math.prod(lead), dtype=np.int64) * k).reshape(*lead, 1)
    return np.ascontiguousarray(a).reshape(-1)[index + base]


def _searchsorted_batched(sorted_rows, x) -> np.ndarray:
    """np.searchsorted(row, x_row, side='left') for every leading index (a loop over the rows:
    exact, where offsetting all rows into one flat array would round near ties). The values of
    a row are looked up in increasing order (numpy's binary search then starts from the last
    hit: ~3x faster for unsorted values of 10^4-10^5 records) and the cells put back in place,
    so the result is the same integers."""
    a = np.asarray(sorted_rows, dtype=float)
    x = np.asarray(x, dtype=float)
    lead = np.broadcast_shapes(a.shape[:-1], x.shape[:-1])
    a2 = np.broadcast_to(a, (*lead, a.shape[-1])).reshape(-1, a.shape[-1])
    x2 = np.broadcast_to(x, (*lead, x.shape[-1])).reshape(a2.shape[0], -1)
    out = np.empty(x2.shape, dtype=np.int64)
    for i in range(a2.shape[0]):
        rank = np.argsort(x2[i])
        out[i, rank] = np.searchsorted(a2[i], x2[i, rank], side="left")
    return out.reshape(*lead, x.shape[-1])
