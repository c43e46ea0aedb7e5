"""Sealed mode: a memory system runs in a process of its own that can read only what a product would have.

`SealedSystem` stands in for the system in the parent: `membench.memory.run.run_memory` drives it as any
`MemorySystem`, and each call crosses a pipe to `membench.memory.sealed.child`, which runs the real system behind
a `membench.memory.sealed.seal.Seal`. The parent keeps the gold, the maps and the ingest ledger; the child sees session
logs whose ids are content hashes (nothing in a name says what is evidence) and the questions' text.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from membench.memory.protocol import Hit, MemoryContext, MemorySystem, Scope, SessionLog
from membench.memory.sealed.seal import Seal
from membench.memory.sealed.child import read_frame, write_frame
from membench.sessions.view import Query


class SealedSystem(MemorySystem):
    def __init__(self, run: str, cls: type[MemorySystem], params: Mapping[str, Any], seal: Seal,
                 embeddings: tuple[Path | None, Mapping[str, Any]] = (None, {})):
        super().__init__(**dict(params))
        self.run, self.cls, self.seal, self.embeddings = run, cls, seal, embeddings
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the parent's plugins too
        self.child = subprocess.Popen([sys.executable, "-m", "membench.memory.sealed.child"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=env)
        self.described = self._ask_init()
        self.name = self.described["name"]
        self.granularities = self.described["granularities"]
        self.uses_metadata = self.described["uses_metadata"]
        self.makes_model_calls = self.described["makes_model_calls"]

    def _ask_init(self) -> dict[str, Any]:
        write_frame(self.child.stdin, {"run": self.run, "cls": (self.cls.__module__, self.cls.__qualname__),
                                       "params": dict(self.params), "seal": self.seal,
                                       "level": logging.getLogger().getEffectiveLevel()})
        return self._answer()

    def _answer(self) -> Any:
        try:
            status, value, records = read_frame(self.child.stdout)
        except EOFError:
            code = self.child.wait()
            raise RuntimeError(f"sealed run {self.run!r}: the system's process ended (exit code {code}); "
                               "its log holds the reason") from None
        for record in records:  # the child's log lines, through this process's handlers (the rule's log)
            logging.getLogger(record.name).handle(record)
        if status == "error":
            raise value
        return value

    def _call(self, method: str, *args: Any) -> Any:
        write_frame(self.child.stdin, (method, args))
        return self._answer()

    @property
    def shares_sessions(self) -> bool:
        return self.described["shares_sessions"]

    def config(self) -> dict[str, Any]:
        return self.described["config"]

    def ingests(self) -> str:
        return self.described["ingests"]

    def open(self, context: MemoryContext) -> None:
        fields = {"store_dir": context.store_dir, "llm_base_url": context.llm_base_url,
                  "llm_model": context.llm_model, "extra": context.extra}
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

    def shutdown(self) -> None:
        """End the child: its stdin closes, it returns."""
        if self.child.poll() is None:
            self.child.stdin.close()
            self.child.wait(timeout=60)
