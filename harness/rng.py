"""Deterministic seed derivation.

Every random stream of a sweep is ``SeedSequence(root, spawn_key=key)`` where ``key`` is derived
from a stable hash of named parts, e.g. ``(study, scenario key, block, "data")`` or
``(study, scenario key, block, "method:lap:eps:0.0183")``. Streams therefore do not depend on the
order in which tasks run, on the number of workers, or on which other methods are in the roster.
No global random state is used anywhere in the harness.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

_WORDS = 4  # 4 x 32-bit words = 128 bits of the hash in the spawn key


def spawn_key(parts: Iterable[object]) -> tuple[int, ...]:
    """Stable 128-bit spawn key from the ``repr``-free string form of ``parts``.

    Parts are joined with an unambiguous separator; floats are formatted with ``repr`` so that
    0.1 and 0.10000000000000002 give different keys.
    """
    text = "\x1f".join(_canonical(p) for p in parts)
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=4 * _WORDS).digest()
    return tuple(int.from_bytes(digest[4 * i : 4 * i + 4], "little") for i in range(_WORDS))


def _canonical(part: object) -> str:
    """String form of one part; numpy scalars are read as the Python numbers they hold, so
    np.float64(0.1) and 0.1 name the same stream under every numpy version."""
    if isinstance(part, np.integer):
        return str(int(part))
    if isinstance(part, (float, np.floating)):
        return repr(float(part))
    if isinstance(part, (list, tuple)):
        return "(" + ",".join(_canonical(p) for p in part) + ")"
    return str(part)


def seed_sequence(root: int, *parts: object) -> np.random.SeedSequence:
    """The SeedSequence of the stream named by ``parts`` under the sweep's ``root`` seed."""
    if not isinstance(root, (int, np.integer)) or isinstance(root, bool) or root < 0:
        raise ValueError(f"seed must be a non-negative integer, got {root!r}")
    return np.random.SeedSequence(int(root), spawn_key=spawn_key(parts))


def generator(root: int, *parts: object) -> np.random.Generator:
    """A fresh PCG64 generator for the named stream."""
    return np.random.Generator(np.random.PCG64(seed_sequence(root, *parts)))


def data_stream(root: int, study: str, scenario_key: str, block: int) -> np.random.Generator:
    """The stream for the original data of one block: shared by every method (common random
    numbers)."""
    return generator(root, study, scenario_key, int(block), "data")


def method_stream(
    root: int, study: str, scenario_key: str, block: int, method: str, epsilon: float | None
) -> np.random.Generator:
    """The stream of one method at one ε (``epsilon=None`` for non-DP baselines)."""
    eps = "none" if epsilon is None else repr(float(epsilon))
    return generator(root, study, scenario_key, int(block), f"method:{method}:eps:{eps}")


def prepare_stream(
    root: int, study: str, scenario_key: str, block: int, method: str
) -> np.random.Generator:
    """The stream of a method's ε-free stage (``Synthesizer.prepare``: e.g. posterior draws
    reused over the ε grid), one per (block, method), independent of the ε streams."""
    return generator(root, study, scenario_key, int(block), f"method:{method}:prepare")
