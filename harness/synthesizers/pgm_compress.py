"""MST's domain compression (McKenna, Miklau & Sheldon 2021, "Winning the NIST contest", §4,
and the authors' reference implementation, private-pgm ``mechanisms/mst.py``,
``compress_domain``): after the one-way marginals are measured, the levels of a column whose
noisy count is below 3σ (σ: the noise SD of that column's one-way measurement) are merged
into one extra level; selection, the two-way measurements and the model then work on the
compressed domain, and a sampled record's merged level is decoded to one of the merged
original levels uniformly at random. The compression reads only the noisy measurements, so
it is post-processing: it spends no privacy.

The one-way measurement is re-expressed on the compressed domain without new noise: the
kept levels keep their noisy counts, the merged level gets the sum of the merged noisy
counts, whose noise SD is σ√k for k merged levels (the per-cell scale handed to the fit).
A column all of whose levels are kept is unchanged; when every level is below 3σ the column
becomes a single merged level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the threshold of the paper and the reference implementation, in noise SDs
THRESHOLD_SDS = 3.0


@dataclass(frozen=True)
class Compression:
    """Per column: the original levels kept (``kept``) and merged (``merged``); the
    compressed code of kept level ``kept[j]`` is j, of every merged level ``len(kept)``."""

    kept: tuple[np.ndarray, ...]
    merged: tuple[np.ndarray, ...]

    @classmethod
    def from_oneway(cls, noisy: list[np.ndarray], sigma: float,
                    threshold: float = THRESHOLD_SDS) -> Compression:
        keep = [np.asarray(y) >= threshold * sigma for y in noisy]
        return cls(tuple(np.flatnonzero(k) for k in keep),
                   tuple(np.flatnonzero(~k) for k in keep))

    @property
    def cards(self) -> tuple[int, ...]:
        return tuple(len(k) + (1 if len(m) else 0)
                     for k, m in zip(self.kept, self.merged, strict=True))

    def encode(self, codes: np.ndarray) -> np.ndarray:
        """Original codes (..., d) → compressed codes."""
        out = np.empty_like(codes)
        for j, (kept, merged) in enumerate(zip(self.kept, self.merged, strict=True)):
            lookup = np.full(len(kept) + len(merged), len(kept), dtype=codes.dtype)
            lookup[kept] = np.arange(len(kept))
            out[..., j] = lookup[codes[..., j]]
        return out

    def oneway(self, j: int, noisy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Column j's noisy one-way counts on the compressed domain and the per-cell noise-SD
        multipliers (1 for a kept level, √k for the merged one)."""
        kept, merged = self.kept[j], self.merged[j]
        if not len(merged):
            return noisy, np.ones(len(kept))
        values = np.append(noisy[kept], noisy[merged].sum())
        scales = np.append(np.ones(len(kept)), np.sqrt(len(merged)))
        return values, scales

    def decode(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Compressed codes (n, d) → original codes; a merged level becomes one of its
        original levels uniformly at random (uniforms from ``rng``, columns in order)."""
        out = np.empty_like(codes)
        for j, (kept, merged) in enumerate(zip(self.kept, self.merged, strict=True)):
            col = codes[:, j]
            is_merged = col == len(kept)
            out[:, j] = kept[np.minimum(col, max(len(kept) - 1, 0))] if len(kept) else 0
            if len(merged):
                pick = rng.integers(0, len(merged), int(is_merged.sum()))
                out[is_merged, j] = merged[pick]
        return out
