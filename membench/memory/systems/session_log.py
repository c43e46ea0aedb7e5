"""`session-log`: the product path — search the session-log folder itself, as a log-reading product would.

Reference for plugging in a system that has no store of its own: ingest records nothing, and each
search reads the question's `<key>/events.jsonl` files from the log folder (read once per file and
modification time), scores each turn's retrieval unit as the log holds it (the dataset's unit format,
`datasets.<name>.units`: the text `bm25` indexes) with BM25 (`bm25`'s tokens and parameters), and breaks
ties by recency: the file's modification time, which the ingest stage sets to the session's time (newer first),
then position in the file.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from membench.adapters.bm25 import BM25Index
from membench.memory.protocol import Hit, MemorySystem, Scope, SessionLog
from membench.sessions.reader import read_events
from membench.sessions.view import Event, Query, unit_text
from membench.adapters.text import merge_params, word_tokens


@lru_cache(maxsize=4096)
def _turns(path: Path, mtime: float) -> tuple[Event, ...]:  # noqa: ARG001 - mtime keys the cache
    return tuple(e for e in read_events(path) if e.kind == "turn")


class SessionLogSystem(MemorySystem):
    name = "session-log"
    defaults = {"k1": 1.5, "b": 0.75, "epsilon": 0.25}

    def __init__(self, **params: Any):
        super().__init__(**merge_params(self.name, self.defaults, params))

    @property
    def shares_sessions(self) -> bool:
        return True  # the log folder is the store: every session is there once

    def ingests(self) -> str:
        return "nothing: each search reads the logs' turns (the dataset's retrieval units)"

    def ingest(self, log: SessionLog) -> None:
        pass  # nothing to index: the product reads the logs when asked

    def forget(self, session_key: str) -> None:
        pass

    @lru_cache(maxsize=4)
    def _index(self, files: tuple[tuple[Path, float], ...]) -> tuple[list[tuple[Event, float]], BM25Index]:
        """The turns of these files (with their times) and their BM25 index; rebuilt when a file changes."""
        found = [(e, mtime) for path, mtime in files for e in _turns(path, mtime)]
        p = self.params
        return found, BM25Index.of_tokens([word_tokens(unit_text(e)) for e, _ in found], p["k1"], p["b"],
                                           p["epsilon"])

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        files = [(scope.directory / key / "events.jsonl") for key in scope.sessions]
        found, index = self._index(tuple((path, os.stat(path).st_mtime) for path in files))
        scores = index.scores(word_tokens(query.text))
        order = sorted(range(len(found)), key=lambda i: (-scores[i], -found[i][1], i))
        return [Hit((found[i][0].ref,), float(scores[i]), found[i][0].text) for i in order[:k]]
