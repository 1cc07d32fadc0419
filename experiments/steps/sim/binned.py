"""PrivBayes (or any synthesizer of coded categorical records) on data with numeric columns, as
the paper runs it in its simulation (spec 003 §3.2): the numeric outcome Y is cut into the
same public equal-width bins as for the tree methods *before* synthesis and treated as
categorical; the released bin codes are decoded uniformly within their bins (spec §2.6, §4.1).

The binning uses only the public bounds of the schema, so it costs no privacy; the decoding is
post-processing. The wrapper adds no mechanism: its release is the inner release (ledger,
claimed ε, diagnostics) with decoded records."""

from __future__ import annotations

from harness.data import RecordBatch
from harness.schema import Categorical, Schema
from harness.synthesizers import Release, Synthesizer
from harness.synthesizers.tree_histogram import AttributeCoding


class BinnedCoded(Synthesizer):
    """``inner`` (a coded-records synthesizer) on the binned records; ``bins`` maps each
    numeric column to its number of bins over the schema's public bounds."""

    def __init__(self, inner: Synthesizer, bins):
        self.inner, self.bins = inner, dict(bins)
        self.m = inner.m
        self.name = inner.name
        self.private = inner.private
        self.neighbour_relation = inner.neighbour_relation
        self.uses_prepare = inner.uses_prepare

    def native_relations(self):
        return self.inner.native_relations()

    def supported_relations(self):
        return self.inner.supported_relations()

    def calibrate(self, relation, label="", delta=None):
        """Calibrate the inner synthesizer (its release makes the ledger)."""
        self.inner.calibrate(relation, label, delta)
        self.neighbour_relation = self.inner.neighbour_relation
        return self

    def claimed_epsilon(self, privacy, data=None):
        return self.inner.claimed_epsilon(privacy, data)

    def _coding(self, data: RecordBatch) -> tuple[AttributeCoding, RecordBatch]:
        coding = AttributeCoding.of(data.schema, self.bins)
        schema = Schema(tuple(
            col if k is None else Categorical(col.name, tuple(range(k)))
            for col, k in zip(data.schema.columns, coding.bins, strict=True)))
        codes = coding.encode(data.values).astype(float)
        return coding, RecordBatch(codes, columns=data.columns, schema=schema)

    def prepare(self, data, rng, parts=None):
        return self.inner.prepare(self._coding(data)[1], rng)

    def release(self, data, privacy, rng, prepared=None, parts=None) -> Release:
        coding, coded = self._coding(data)
        rel = self.inner.release(coded, privacy, rng, prepared=prepared)
        values = coding.decode(rel.sets.values.astype(int), rng)
        sets = RecordBatch(values, columns=data.columns, schema=data.schema)
        return Release(sets, rel.privacy, rel.ledger, rel.diagnostics, rel.kind, rel.claimed)

    def _release(self, data, epsilon, ledger, rng):  # pragma: no cover - release is overridden
        raise NotImplementedError
