"""A small real memory system for the protocol tests: a JSON file per ingested session, word-overlap search.

It counts what it is asked to do (`calls`), keeps its store on disk (so a rerun finds it), and can be told
to fail after N ingests (to cut an ingest off and test the resume).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from membench.memory.protocol import Hit, MemorySystem
from membench.sessions.reader import read_events
from membench.adapters.text import word_tokens


class Crash(RuntimeError):
    pass


class NoteSystem(MemorySystem):
    name = "notes"

    def __init__(self, share: bool = True, fail_after: int | None = None):
        super().__init__(share=share)
        self.fail_after = fail_after
        self.calls: Counter = Counter()
        self.ingested: Counter = Counter()
        self.forgotten: list[str] = []
        self.prepared: list[tuple[int, int]] = []  # (sessions to ingest, questions) per store

    @property
    def shares_sessions(self) -> bool:
        return self.params["share"]

    def _file(self, key: str) -> Path:
        return self.context.store_dir / f"{key}.json"

    def prepare(self, logs, queries) -> None:
        self.prepared.append((len(logs), len(queries)))

    def ingest(self, log) -> None:
        self.calls["ingest"] += 1
        turns = [(e.ref, e.text) for e in read_events(log.path) if e.kind == "turn"]
        self._file(log.key).write_text(json.dumps(turns[: len(turns) // 2]), encoding="utf-8")
        if self.fail_after is not None and self.calls["ingest"] > self.fail_after:
            raise Crash(f"cut off while ingesting {log.key}")  # half a session is on disk
        self._file(log.key).write_text(json.dumps(turns), encoding="utf-8")
        self.ingested[log.key] += 1

    def forget(self, session_key: str) -> None:
        self.forgotten.append(session_key)
        self._file(session_key).unlink(missing_ok=True)

    def search(self, query, k, scope):
        self.calls["search"] += 1
        words = set(word_tokens(query.text))
        hits = []
        for key in scope.sessions:
            for position, (ref, text) in enumerate(json.loads(self._file(key).read_text(encoding="utf-8"))):
                hits.append(Hit((ref,), float(len(words & set(word_tokens(text)))), text))
        return sorted(hits, key=lambda h: -h.score)[:k]
