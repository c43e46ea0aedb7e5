"""Plugins that each break one rule of membench.sessions.checks (tests/test_untrusted_output.py runs them)."""

from __future__ import annotations

from membench.adapters.base import Adapter
from membench.memory.protocol import Hit, MemorySystem
from membench.sessions.reader import read_events


class _FirstDocs(Adapter):
    """Ranks the first documents of the haystack; subclasses spoil the answer one way each."""

    def rank(self, query, haystack, granularity, k):
        return [(d.item_id, 1.0 / (i + 1)) for i, d in enumerate(haystack.documents(granularity)[:k])]


class DuplicateIds(_FirstDocs):
    name = "duplicate-ids"

    def rank(self, query, haystack, granularity, k):
        ranking = super().rank(query, haystack, granularity, k)
        return ranking[:1] * 2 + ranking[2:]


class ForeignIds(_FirstDocs):
    name = "foreign-ids"

    def rank(self, query, haystack, granularity, k):
        return [("s0000000000000000-1", 2.0)] + super().rank(query, haystack, granularity, k)[1:]


class InfiniteScores(_FirstDocs):
    name = "infinite-scores"

    def rank(self, query, haystack, granularity, k):
        return [(item, float("inf")) for item, _ in super().rank(query, haystack, granularity, k)]


class TooMany(_FirstDocs):
    name = "too-many"

    def rank(self, query, haystack, granularity, k):
        return super().rank(query, haystack, granularity, k + 1)


class ShortScoreList(Adapter):
    name = "short-score-list"

    def score(self, query, documents):
        return [1.0] * (len(documents) - 1)


class FewerThanK(_FirstDocs):
    name = "fewer-than-k"

    def rank(self, query, haystack, granularity, k):
        return super().rank(query, haystack, granularity, min(k, 3))


class _FirstTurns(MemorySystem):
    """Answers with the first turns of its scope; subclasses spoil the answer one way each."""

    granularities = ("turn", "session")

    def ingest(self, log):
        pass

    def forget(self, session_key):
        pass

    def first_refs(self, scope, n):
        refs = [e.ref for key in scope.sessions[:n] for e in read_events(scope.directory / key / "events.jsonl")]
        return refs[:n]

    def search(self, query, k, scope):
        return [Hit((ref,), 1.0 / (i + 1)) for i, ref in enumerate(self.first_refs(scope, k))]


class MemoryForeignRefs(_FirstTurns):
    name = "memory-foreign"

    def search(self, query, k, scope):
        return [Hit(("elsewhere-1",), 1.0)] + list(super().search(query, k, scope))[1:]


class MemoryRefTwice(_FirstTurns):
    name = "memory-twice"

    def search(self, query, k, scope):
        ref = self.first_refs(scope, 1)[0]
        return [Hit((ref, ref), 1.0)]


class MemoryNanScore(_FirstTurns):
    name = "memory-nan"

    def search(self, query, k, scope):
        return [Hit(h.refs, float("nan")) for h in super().search(query, k, scope)]


class MemoryTooMany(_FirstTurns):
    name = "memory-too-many"

    def search(self, query, k, scope):
        return [Hit((ref,), 1.0) for ref in self.first_refs(scope, k + 1)]


class PeeksAtTheMaps(_FirstTurns):
    """Reads the id map that sits beside the session logs (the scorer's, not the system's, file)."""

    name = "peeks"

    def search(self, query, k, scope):
        (scope.directory.parent / "maps" / "item_map.parquet").read_bytes()
        return super().search(query, k, scope)


class ReadsTheBenchmarkFile(_FirstTurns):
    """Reads the benchmark's published file, whose path it was given as a parameter."""

    name = "reads-benchmark"

    def search(self, query, k, scope):
        with open(self.params["path"], "rb"):
            pass
        return super().search(query, k, scope)
