"""The paper's literal consistency step, kept as an ablation (``consistency: hay_padded``; spec 003
§2.5, A6): every attribute is padded with phantom levels up to the largest number of levels b,
so that every node has b children; phantom nodes have noise-free counts 0; Hay et al.'s (2010)
closed form for a uniform tree with equal variances (the paper's Eqns 2–3 as corrected in spec
§2.5) runs on the padded tree with the public root n; phantoms are dropped (forced to 0) at the
end, so the real nodes are no longer exactly consistent. Only trees of one attribute per level
can be padded this way (spec §2.5 review note); the default ``gls`` needs no padding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError


def hay_closed_form(noisy: Sequence[np.ndarray], b: int, root) -> list[np.ndarray]:
    """Hay et al.'s estimate on a uniform tree of fan-out b (levels (R, b^d), d = 1..D, equal
    variances): z = y at the leaves; z[v] = (b^h − b^(h−1))/(b^h − 1)·y[v] + (b^(h−1) − 1)/(b^h
    − 1)·Σ z[children] at height h; n̄[v] = z[v] + (n̄[parent] − Σ z[siblings])/b, n̄_root =
    ``root`` (public)."""
    depth = len(noisy)
    z = [None] * depth
    z[-1] = np.asarray(noisy[-1], dtype=float)
    for d in range(depth - 2, -1, -1):
        h = depth - d
        kids = z[d + 1].reshape(*z[d + 1].shape[:-1], -1, b).sum(axis=-1)
        z[d] = ((b**h - b ** (h - 1)) * noisy[d] + (b ** (h - 1) - 1) * kids) / (b**h - 1)
    parent = np.asarray(root, dtype=float).reshape(-1, 1)
    out = []
    for d in range(depth):
        sums = z[d].reshape(*z[d].shape[:-1], -1, b).sum(axis=-1)
        child = z[d] + np.repeat((parent - sums) / b, b, axis=-1)
        out.append(child)
        parent = child
    return out


def _padded_index(layout, d: int, b: int) -> np.ndarray:
    """Index in the padded level d of every real node of level d (mixed radix → base b)."""
    cards = [layout.cards[g[0]] for g in layout.levels[: d + 1]]
    real = np.arange(int(np.prod(cards)))
    index = np.zeros_like(real)
    rest = real.copy()
    digits = []
    for k in reversed(cards):
        digits.append(rest % k)
        rest //= k
    for digit in reversed(digits):
        index = index * b + digit
    return index


def hay_padded_counts(noisy: Sequence[np.ndarray], layout, root) -> list[np.ndarray]:
    """Consistent counts of a one-attribute-per-level tree by Hay's formula on the phantom-padded
    tree; structural-zero and phantom nodes end at 0."""
    if any(len(g) != 1 for g in getattr(layout, "levels", [()])):
        raise ConfigError("consistency: hay_padded pads one attribute per level; this tree has "
                          "a level of several attributes (allowed here: gls, none)")
    b = max(layout.cards)
    r = noisy[0].shape[0]
    index = [_padded_index(layout, d, b) for d in range(layout.depth)]
    padded = []
    for d, (y, ok) in enumerate(zip(noisy, layout.valid(), strict=True)):
        full = np.zeros((r, b ** (d + 1)))
        full[:, index[d]] = np.where(ok, y, 0.0)
        padded.append(full)
    fitted = hay_closed_form(padded, b, root)
    return [np.where(ok, f[:, i], 0.0)
            for f, i, ok in zip(fitted, index, layout.valid(), strict=True)]
