"""The ingest-then-search contract for memory systems (mem0 and the like), beside the `Adapter` one.

An `Adapter` is handed a whole haystack at query time. A memory system works as a product does: it
*ingests* the session logs (`sessions/<key>/events.jsonl`, gold-free) in time order into its own store,
and later answers `search(query, k, scope)` with `Hit`s that point back into the logs: a turn ref
(`<session key>_<n>`), a session key, or — for a fact the system derived — the refs of the turns it was
drawn from. membench turns the hits into a ranking of the benchmark's items and scores it against gold.

Lifecycle, per store: `open(context)` -> `prepare(logs, queries)` (optional: batch the store's work, e.g.
embed every message and question in one model call) -> `ingest(log)` for each session not yet in the store (a resumed
store first gets `forget(key)` for a session whose ingest was cut off) -> `search(...)` many times ->
`close()`. `shares_sessions = True` means one store per dataset holds every distinct session once and
`search` keeps to `scope.sessions`; False means one store per haystack (keyed by its content).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

from membench.sessions.view import Query


@dataclass(frozen=True)
class SessionLog:
    """One session's log file as the product would find it on disk; `timestamp` = the file's time."""

    key: str
    path: Path
    timestamp: str | None


@dataclass(frozen=True)
class Scope:
    """What one question may search: its haystack's session keys (in benchmark order) and the log folder."""

    sessions: tuple[str, ...]
    directory: Path


@dataclass(frozen=True)
class Hit:
    """One search result: the log items it points at (turn refs or session keys), best first. A result that names
    none but carries its text is attributed to turns by membench (`membench.memory.attribution`), which sets
    `attributed`."""

    refs: tuple[str, ...]
    score: float
    text: str = ""
    attributed: bool = False


@dataclass
class MemoryContext:
    """What membench hands a system when it opens a store."""

    store_dir: Path  # the system's own folder for this store (persisted between runs)
    embedding_cache: Any = None  # a membench.embedding.cache.EmbeddingCache (MiniLM), for systems that embed
    llm_base_url: str | None = None  # membench's caching OpenAI-compatible endpoint, when model calls are on
    llm_model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    run: str = ""  # the run's name, for messages that must say which run failed


class MemorySystem:
    """Base class: set `name`, implement `ingest` and `search`; `forget` makes an interrupted ingest resumable."""

    name: ClassVar[str] = "memory"
    uses_metadata: ClassVar[tuple[str, ...]] = ()
    granularities: ClassVar[tuple[str, ...]] = ("turn", "session")
    makes_model_calls: ClassVar[bool] = False  # True: membench starts its caching endpoint for this run
    needs: ClassVar[frozenset[str]] = frozenset()  # beyond the session logs every memory system reads (membench.runs.needs)

    def __init__(self, **params: Any):
        self.params = dict(params)

    @classmethod
    def sealed_reads(cls, params: Mapping[str, Any]) -> list[Path]:
        """What it must read beyond its code, Python and its store when sealed (a server it starts); none here."""
        return []

    @property
    def shares_sessions(self) -> bool:
        return False

    def config(self) -> dict[str, Any]:
        return dict(self.params)

    def ingests(self) -> str:
        """What text goes into the store, in a few words (the report shows it beside the run)."""
        return "the session logs (events.jsonl)"

    def open(self, context: MemoryContext) -> None:
        self.context = context

    def prepare(self, logs: Sequence[SessionLog], queries: Sequence[Query]) -> None:
        """Called once per store before its ingest: the sessions still to ingest and the questions it will be
        searched for (nothing by default)."""

    def ingest(self, log: SessionLog) -> None:
        raise NotImplementedError

    def forget(self, session_key: str) -> None:
        """Remove whatever a cut-off ingest of this session left in the store."""
        raise NotImplementedError(f"{self.name} cannot resume an interrupted ingest; delete its store to start over")

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def stats(self) -> dict[str, Any]:
        """What the system counts about its own run, for the run's metadata and the report (none by default; the
        MCP system: how its results were mapped back to turns)."""
        return {}


def is_memory_system(cls: Any) -> bool:
    """Whether `cls` is a memory system class (ingest, then search) rather than an adapter."""
    return isinstance(cls, type) and issubclass(cls, MemorySystem)
