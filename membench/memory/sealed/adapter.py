"""A third-party adapter (`module:Class`) run sealed: a process of its own that gets each question and its haystack
(the gold-free view), ranks it, and cannot open the gold.

`SealedAdapter` stands in for the adapter in the rank stage. The haystack crosses the pipe once per haystack (the
questions of one LoCoMo conversation share one), without the documents it has built; the child builds them
itself. The child embeds through its own copy of the embedding cache's context: it reads the shared cache and
writes what it adds to its private folder, so built-in adapters' prefetching does not apply (`embedder()` is None).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from membench.adapters.base import Adapter
from membench.memory.sealed.process import SealedProcess
from membench.memory.sealed.seal import Seal
from membench.sessions.view import Haystack, Query


class SealedAdapter(SealedProcess, Adapter):
    """An Adapter whose `rank` runs in the sealed process; it embeds nothing ahead (the base class's plan)."""

    role = "adapter"

    def __init__(self, run: str, spec: str, cls: type, params: Mapping[str, Any], seal: Seal,
                 context: Mapping[str, Any], timeout: float | None = None):
        self.spec, self.context = spec, dict(context)
        self._sent: Haystack | None = None
        super().__init__(run, cls, params, seal, timeout)
        self.needs = self.described["needs"]

    def start_frame(self) -> dict[str, Any]:
        return {"spec": self.spec, "context": self.context}

    def rank(self, query: Query, haystack: Haystack, granularity: str, k: int) -> list[tuple[str, float]]:
        sent = None
        if haystack is not self._sent:
            sent, self._sent = dataclasses.replace(haystack), haystack  # a copy without its built documents
        return self._call("rank", query, sent, granularity, k)
