"""Sealed mode: a memory system runs in a process of its own that can read only what a product would have.

`SealedSystem` stands in for the system in the parent: `membench.memory.run.run_memory` drives it as any
`MemorySystem`, and each call crosses a pipe to `membench.memory.sealed.child`, which runs the real system behind
a `membench.memory.sealed.seal.Seal`. The parent keeps the gold, the maps and the ingest ledger; the child sees session
logs whose ids are content hashes (nothing in a name says what is evidence) and the questions' text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from membench.memory.protocol import Hit, MemoryContext, MemorySystem, Scope, SessionLog
from membench.memory.sealed.process import SealedProcess
from membench.memory.sealed.seal import Seal
from membench.sessions.view import Query


class SealedSystem(SealedProcess, MemorySystem):
    def __init__(self, run: str, cls: type[MemorySystem], params: Mapping[str, Any], seal: Seal,
                 embeddings: tuple[Path | None, Mapping[str, Any]] = (None, {}), timeout: float | None = None,
                 ports: tuple[int, ...] = ()):
        """`embeddings`: the shared cache's folder and options; `ports`: membench's caching endpoint's, if any."""
        MemorySystem.__init__(self, **dict(params))
        self.embeddings = embeddings
        store = seal.writable[0] if seal.writable else None
        overlay = str(Path(store) / ".sealed-embeddings") if seal.kind == "landlock" and store else None
        SealedProcess.__init__(self, run, cls, params, seal, timeout, overlay, ports)
        self.makes_model_calls = self.described["makes_model_calls"]

    @property
    def shares_sessions(self) -> bool:
        return self.described["shares_sessions"]

    def ingests(self) -> str:
        return self.described["ingests"]

    def open(self, context: MemoryContext) -> None:
        fields = {"store_dir": context.store_dir, "llm_base_url": context.llm_base_url,
                  "llm_model": context.llm_model, "extra": context.extra, "run": context.run}
        folder, options = self.embeddings
        self._call("open", fields, (folder, dict(options)) if context.embedding_cache is not None else None)

    def prepare(self, logs: Sequence[SessionLog], queries: Sequence[Query]) -> None:
        self._call("prepare", list(logs), list(queries))

    def ingest(self, log: SessionLog) -> None:
        self._call("ingest", log)

    def forget(self, session_key: str) -> None:
        self._call("forget", session_key)

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        return self._call("search", query, k, scope)

    def close(self) -> None:
        self._call("close")

    def stats(self) -> dict[str, Any]:
        return self._call("stats")
