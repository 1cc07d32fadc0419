"""Feature hashing of the perturbed Gibbs sampler (Park & Ghosh §3.2; spec 001 §1.2).

For every target feature i the other features are put in a priority order o(1), …, o(M−1). The
key of a conditioning vector x_−i is the mixed-radix code of the *head* x_o(1) :: … :: x_o(m)
(the paper's "trivial hash"; o(1) most significant) followed by a 1-bit hash of the *tail*
x_o(m+1) :: … :: x_o(M−1) (the "1 bit tail"): key = head_code · 2 + bit, so table i has
H_i = 2 · ∏_{k ≤ m} C_o(k) keys. Without a tail (m = M − 1) or with ``tail_hash="none"`` there is
no bit and H_i = ∏_{k ≤ m} C_o(k); with m = 0 as well the key is constant (the marginal sampler).

Tail bits (spec §1.2 [RES] and its REVIEW note), both data-independent:

* ``splitmix_parity``: the tail as a mixed-radix int64 code, XORed with a per-table salt drawn
  from ``hash_seed``, mixed by splitmix64, ``& 1``;
* ``random_projection``: [Σ_k r_k · (code_k − (C_k − 1)/2) > 0] with r_k ~ N(0, 1) from
  ``hash_seed`` (a centred threshold, not the data median, so the split does not read the data).

The hash structure (orders, head size, salts, projections) must not depend on the data being
released: the ε guarantee of PeGS conditions on it (spec §1.4 caveats). :func:`mi_orders` computes
the paper's mutual-information order, to be applied to a *public* data set only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError

TAIL_HASHES = ("splitmix_parity", "random_projection", "none")
_MASK64 = (1 << 64) - 1


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (Steele, Lea & Flood 2014) applied elementwise to uint64."""
    z = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def mixed_radix(codes: np.ndarray, radices) -> np.ndarray:
    """Mixed-radix int64 code of ``codes`` (..., k) with the first column most significant."""
    out = np.zeros(codes.shape[:-1], dtype=np.int64)
    for j, c in enumerate(radices):
        out = out * int(c) + codes[..., j].astype(np.int64)
    return out


def mutual_information(codes: np.ndarray, cards) -> np.ndarray:
    """Plug-in mutual information (nats) of every pair of columns of ``codes`` (n, M): the
    empirical pairwise joint of (X_i, X_k), every level (NA included) an ordinary category
    (spec §1.2 [RES])."""
    codes = np.asarray(codes, dtype=np.int64)
    n, p = codes.shape
    mi = np.zeros((p, p))
    for i in range(p):
        for k in range(i + 1, p):
            joint = np.bincount(codes[:, i] * cards[k] + codes[:, k],
                                minlength=cards[i] * cards[k]).reshape(cards[i], cards[k]) / n
            outer = joint.sum(1, keepdims=True) * joint.sum(0, keepdims=True)
            nz = joint > 0
            mi[i, k] = mi[k, i] = float(np.sum(joint[nz] * np.log(joint[nz] / outer[nz])))
    return mi


def mi_orders(codes: np.ndarray, cards) -> list[tuple[int, ...]]:
    """Per target i, the other features by mutual information with x_i, highest first, ties
    to the lower feature index (Park & Ghosh §3.2 step 1; spec §1.2)."""
    mi = mutual_information(codes, cards)
    p = len(cards)
    return [tuple(sorted((k for k in range(p) if k != i), key=lambda k: (-mi[i, k], k)))
            for i in range(p)]


@dataclass(frozen=True)
class TableHash:
    """The hash of target feature i: ``head`` and ``tail`` feature indices, the tail-bit rule,
    its per-table salt and projection, and the number of keys ``n_keys`` (H_i)."""

    target: int
    head: tuple[int, ...]
    tail: tuple[int, ...]
    head_cards: tuple[int, ...]
    tail_cards: tuple[int, ...]
    tail_hash: str
    salt: int
    projection: tuple[float, ...]

    @property
    def uses_bit(self) -> bool:
        return bool(self.tail) and self.tail_hash != "none"

    @property
    def n_keys(self) -> int:
        return int(np.prod(self.head_cards, dtype=np.int64)) * (2 if self.uses_bit else 1)

    def keys(self, state: np.ndarray) -> np.ndarray:
        """Integer keys (...,) of the states (..., M); column ``target`` is never read."""
        key = mixed_radix(state[..., list(self.head)], self.head_cards)
        if not self.uses_bit:
            return key
        return key * 2 + self.bit(state)

    def bit(self, state: np.ndarray) -> np.ndarray:
        tail = state[..., list(self.tail)]
        if self.tail_hash == "splitmix_parity":
            code = mixed_radix(tail, self.tail_cards).astype(np.uint64) ^ np.uint64(self.salt)
            return (splitmix64(code) & np.uint64(1)).astype(np.int64)
        centred = tail - (np.asarray(self.tail_cards) - 1) / 2.0
        return (centred @ np.asarray(self.projection) > 0).astype(np.int64)


def build_hashes(cards, orders, head_size: int, tail_hash: str,
                 hash_seed: int) -> tuple[TableHash, ...]:
    """The M table hashes from per-target priority ``orders`` (each a permutation of the other
    features), the head size m and the tail rule; salts and projections come from ``hash_seed``
    only (data-independent)."""
    cards = tuple(int(c) for c in cards)
    p = len(cards)
    if not 0 <= head_size <= p - 1:
        raise ConfigError(f"head_size: must lie in 0..{p - 1} (M - 1) for data with {p} "
                          f"columns, got {head_size}")
    rng = np.random.default_rng(np.random.SeedSequence(int(hash_seed), spawn_key=(0x7E95,)))
    salts = rng.integers(0, 2**63, size=p, dtype=np.int64)
    hashes = []
    for i, order in enumerate(orders):
        head, tail = tuple(order[:head_size]), tuple(order[head_size:])
        tail_cards = tuple(cards[k] for k in tail)
        if tail_hash == "splitmix_parity" and tail and \
                np.prod(np.asarray(tail_cards, dtype=float)) >= 2.0**63:
            raise ConfigError("tail_hash: the tail's mixed-radix code overflows int64 "
                              "(allowed: random_projection, none, or a larger head_size)")
        projection = tuple(rng.standard_normal(len(tail)).tolist())
        hashes.append(TableHash(i, head, tail, tuple(cards[k] for k in head), tail_cards,
                                tail_hash, int(salts[i]), projection))
    return tuple(hashes)


def count_tables(hashes, codes: np.ndarray, cards) -> list[np.ndarray]:
    """Dense int64 occurrence tables T_i of shape (R, H_i, C_i) (Park & Ghosh §3.2 step 4):
    T_i[r, key, j] = number of rows of data set r (``codes`` (R, n, M)) whose key for table i
    is ``key`` and whose x_i is j (n_ij of Eq. 5; its row sums are N_h)."""
    r = codes.shape[0]
    tables = []
    for h in hashes:
        c = int(cards[h.target])
        cell = (h.keys(codes) * c + codes[..., h.target]).astype(np.int64)
        flat = cell + (np.arange(r, dtype=np.int64) * h.n_keys * c)[:, None]
        counts = np.bincount(flat.ravel(), minlength=r * h.n_keys * c)
        tables.append(counts.reshape(r, h.n_keys, c))
    return tables
