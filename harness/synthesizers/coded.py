"""Coded categorical records for notebook use: a DataFrame of categorical columns as a
:class:`RecordBatch` of integer codes with a schema (one replicate), and released sets back as
DataFrames of labels. Shared by the synthesizers of coded records (``input_kind = "coded"``)."""

from __future__ import annotations

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError
from ..schema import Categorical, Schema


def coded_batch(records, levels=None) -> RecordBatch:
    """One data set of categorical columns (a DataFrame or a mapping of columns) as a batch of
    one replicate of codes; ``levels`` maps a column to its levels (public; without it the
    levels are read from the records, which is itself a disclosure). A label outside the given
    levels is a one-line error."""
    import pandas as pd

    frame = pd.DataFrame(records)
    levels = dict(levels or {})
    columns = tuple(Categorical(str(name), tuple(levels.get(name, sorted(
        frame[name].unique().tolist())))) for name in frame.columns)
    schema = Schema(columns)
    codes = np.stack([frame[c.name].map({v: k for k, v in enumerate(c.levels)}).to_numpy()
                      for c in columns], axis=-1)
    if np.isnan(codes.astype(float)).any():
        raise ConfigError("levels: the records hold labels outside the given levels")
    return RecordBatch(codes[None].astype(float), columns=schema.names, schema=schema)


def decoded_sets(release, replicate: int = 0) -> list:
    """The m released sets of one replicate of a release of coded records, as DataFrames of
    labels."""
    import pandas as pd

    schema = release.sets.schema
    out = []
    for j in range(release.m):
        v = release.sets.values[replicate, j].astype(np.int64)
        out.append(pd.DataFrame({c.name: np.asarray(c.levels, dtype=object)[v[:, k]]
                                 for k, c in enumerate(schema.columns)}))
    return out


class CodedRecordsSynthesize:
    """Mixin of synthesizers of coded records: ``synthesize`` (notebook use) takes a DataFrame
    of categorical columns (with optional public ``levels``, a mapping column → levels) or a
    ready RecordBatch, and returns m DataFrames of labels (of a RecordBatch: the base class's
    records)."""

    def synthesize(self, records, epsilon: float | None = None, *, seed=None, levels=None):
        if isinstance(records, RecordBatch):
            return super().synthesize(records, epsilon, seed=seed)
        data = coded_batch(records, levels)
        return decoded_sets(self.release(data, epsilon, np.random.default_rng(seed)))
