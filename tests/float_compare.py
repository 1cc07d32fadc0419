"""Comparing the floats of two different computational paths (a vectorised function and its
loop oracle, a batch and its problems one at a time, a fast path and a reference).

Bit-identity is the harness's promise for the SAME path across runs, worker counts, executors
and resumes on one machine; tests of that stay exact. Two different paths agree bit for bit
only by accident of the CPU: numpy picks its SIMD kernels (reductions, ``np.dot``,
``np.linalg.norm``, exp/log) and OpenBLAS its gemm/gemv kernels per CPU, so paths that agree
exactly on one machine can differ by an ulp on another (an AVX-512 machine did, issue 23).
Such tests compare with :func:`assert_close_ulps`; a test that stays exact across two paths
says in a comment why their operation order is the same."""

import numpy as np

EPS = np.finfo(float).eps


def assert_close_ulps(actual, desired, ulps: float = 4, *, scale: float = 0.0,
                      err_msg: str = "") -> None:
    """``|actual − desired| ≤ ulps·eps·(|desired| + scale)`` elementwise (NaN matches NaN,
    shapes must match). ``scale`` bounds the error of entries that are sums or products of
    larger terms (a matrix product, a solve), whose rounding is relative to the terms, not to
    the result: pass e.g. the largest |desired| of the array then."""
    np.testing.assert_allclose(actual, desired, rtol=ulps * EPS, atol=ulps * EPS * scale,
                               err_msg=err_msg)
