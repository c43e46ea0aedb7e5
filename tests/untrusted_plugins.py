"""Plugins that break membench's rules: each of the first ones breaks one rule of membench.sessions.checks
(tests/test_untrusted_output.py runs them); the last ones try to read the gold, which the seal forbids (tests/test_sealed.py)."""

from __future__ import annotations

import ctypes
import json
import os
import shlex
import subprocess
from pathlib import Path

from membench.adapters.base import Adapter
from membench.adapters.bm25 import BM25Adapter
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


class TriesEveryRoute(_FirstTurns):
    """A hostile plugin: at its first search it tries six ways to read `params["target"]` (the gold) and one write
    outside its store (`params["outside"]`), and notes in `<store>/routes.json` what each got (bytes read or the
    error), then answers as `_FirstTurns`. tests/test_sealed.py reads the notes."""

    name = "tries-every-route"

    def search(self, query, k, scope):
        notes = self.context.store_dir / "routes.json"
        if not notes.exists():
            notes.write_text(json.dumps({route: _attempt(getattr(self, f"_{route}")) for route in ROUTES}))
        return super().search(query, k, scope)

    def _open(self):
        with open(self.params["target"], "rb") as f:
            return len(f.read())

    def _os_open(self):
        fd = os.open(self.params["target"], os.O_RDONLY)
        try:
            return len(os.read(fd, 1 << 20))
        finally:
            os.close(fd)

    def _pyarrow(self):
        import pyarrow.parquet as pq

        return pq.read_table(self.params["target"]).nbytes

    def _subprocess(self):
        return len(subprocess.run(["cat", self.params["target"]], capture_output=True, check=True).stdout)

    def _os_system(self):
        copy = self.context.store_dir / "system-copy"
        status = os.system(f"cat {shlex.quote(self.params['target'])} > {shlex.quote(str(copy))} 2>/dev/null")
        if status:
            raise OSError(f"os.system exited with {status}")
        return copy.stat().st_size

    def _ctypes(self):
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.open(os.fsencode(self.params["target"]), os.O_RDONLY)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "libc open refused")
        buffer = ctypes.create_string_buffer(1 << 20)
        try:
            return libc.read(fd, buffer, len(buffer))
        finally:
            libc.close(fd)

    def _write_outside(self):
        return Path(self.params["outside"]).write_text("written from a sealed run")


ROUTES = ("open", "os_open", "pyarrow", "subprocess", "os_system", "ctypes", "write_outside")


def _attempt(route):
    """What one route got: the bytes it read (or wrote), or the error that stopped it."""
    try:
        return {"bytes": route()}
    except Exception as exc:  # noqa: BLE001 -- every refusal is a result here
        return {"error": f"{type(exc).__name__}: {exc}"}


class CheatsWithTheGold(BM25Adapter):
    """BM25, but ranks the question's gold turns first whenever it can read the gold files of the dataset folder
    (`folder`) with pyarrow's C reader; where it cannot, it ranks as plain BM25."""

    name = "cheats-with-the-gold"

    def __init__(self, folder: str, **params):
        super().__init__(**params)
        self.folder, self._gold = Path(folder), None

    def gold(self) -> dict[str, set[str]]:
        if self._gold is None:
            import pyarrow.parquet as pq
            try:
                read = lambda name: pq.read_table(self.folder / name).to_pandas()  # noqa: E731
                items, queries, qrels = read("maps/item_map.parquet"), read("maps/query_map.parquet"), read("qrels.parquet")
            except OSError:
                self._gold = {}
                return self._gold
            opaque = dict(zip(zip(items.granularity, items.item_id), items.opaque_id))
            key = dict(zip(queries.question_id, queries.query_key))
            self._gold = {}
            for row in qrels.itertuples():
                self._gold.setdefault(key[row.question_id], set()).add(opaque.get((row.granularity, row.item_id)))
        return self._gold

    def rank(self, query, haystack, granularity, k):
        ranking = super().rank(query, haystack, granularity, k)
        gold = self.gold().get(query.key, set())
        return sorted(ranking, key=lambda pair: pair[0] not in gold)


class NeverAnswers(_FirstTurns):
    """A library that hangs in its first search (a lost lock, a model that never replies)."""

    name = "never-answers"

    def search(self, query, k, scope):
        import time
        time.sleep(3600)
