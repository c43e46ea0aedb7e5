"""`mem0`: the mem0 library (`pip install "membench[mem0]"`), run offline, as a memory system under test.

Store: mem0's embedded Qdrant (a local folder) plus its SQLite history, both inside the membench store
folder. Embedder: the packaged all-MiniLM-L6-v2 through membench's embedding cache (a text embedded once,
e.g. a question, is shared with the `dense` runs). What goes in is what a product would send: the raw
messages (`content: message`, the default; `dense` instead embeds the dataset's retrieval units, which on
LoCoMo carry the date and speaker), or with `content: unit` those units, to compare like with like.
Telemetry: off (`MEM0_TELEMETRY=False` is set before mem0 is imported; mem0 reads it at import time)
and mem0's home folder (`MEM0_DIR`) is the store folder, not `~/.mem0`.

`infer: false` stores every message as one memory (zero model calls). `infer: true` lets mem0's own LLM
extraction turn messages into facts; the calls go to membench's caching endpoint, so they are cached,
metered and budgeted. Each `add` call gets `turns_per_add` consecutive turns and the refs of those turns
as metadata, so a fact extracted from them points back at them. mem0 writes today's date into its
extraction prompt; it is pinned to the session's date here, so a rerun sends the identical prompt. Reply entries
mem0 cannot store (a bare string among the facts crashes its `add`) are dropped and counted (`mem0_replies`).

With `share_sessions: true` (default) one store holds each distinct session once: each session is added
under its own `run_id` (mem0 then extracts each session on its own, independent of ingest order) and a
search is filtered to the question's sessions. With false, one store per haystack and one `user_id`
across its sessions, mem0's natural use for one user's history (extraction sees earlier memories).
Without spaCy/fastembed installed mem0 ranks by vector similarity alone (its BM25 and entity boosts
switch themselves off); `features` in the run metadata says which were active. Its vector search is
put in an order that does not depend on the store's layout (`mem0_order`), so a resumed store ranks as a
fresh one does.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Sequence

from membench.io import atomic_write_text
from membench.memory.systems.mem0_order import layout_free
from membench.memory.systems.mem0_replies import guarded
from membench.memory.protocol import Hit, MemoryContext, MemorySystem, Scope, SessionLog
from membench.sessions.reader import read_events
from membench.sessions.view import Query, turn_text, unit_text

USER = "membench"
DEFAULTS = {"infer": False, "share_sessions": True, "turns_per_add": 2, "threshold": 0.0, "llm_params": {},
            "content": "message"}
CONTENT = {  # what a message's content is -> what the report says was ingested
    "message": "raw messages: each turn's text (+ image caption) as content, speaker as name, session time as "
               "created_at",
    "unit": "the dataset's retrieval units (datasets.<name>.units, e.g. LoCoMo's dated 'X said' lines) as content",
}


def import_mem0():
    """Import mem0 with telemetry off and its home folder kept out of ~ (both read at import time)."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", str(Path.cwd() / ".mem0"))
    try:
        import mem0  # noqa: F401
        from mem0.memory import main, telemetry
    except ImportError as exc:
        raise ImportError("the mem0 memory system needs the mem0ai package: pip install 'membench[mem0]'") from exc
    if telemetry.MEM0_TELEMETRY:
        raise RuntimeError("mem0 was imported before membench could switch its telemetry off; "
                           "set MEM0_TELEMETRY=False in the environment")
    return main


class _CachedEmbedder:
    """mem0's embedder interface over membench's content-addressed MiniLM cache."""

    def __init__(self, cache):
        self.cache = cache

    def embed(self, text, memory_action=None):  # noqa: ARG002 - mem0's signature
        return self.cache.encode([text])[0].tolist()

    def embed_batch(self, texts, memory_action="add"):  # noqa: ARG002
        return self.cache.encode(list(texts)).tolist() if texts else []


@contextlib.contextmanager
def _pinned_prompt_date(main, date: str | None):
    """mem0's extraction prompt carries today's date; pin it to the session's so the prompt is reproducible."""
    original = main.generate_additive_extraction_prompt
    if date:
        main.generate_additive_extraction_prompt = (
            lambda *a, **kw: original(*a, **{"current_date": date[:10], **kw}))
    try:
        yield
    finally:
        main.generate_additive_extraction_prompt = original


class Mem0System(MemorySystem):
    name = "mem0"

    def __init__(self, **params: Any):
        unknown = set(params) - set(DEFAULTS)
        if unknown:
            raise ValueError(f"mem0: unknown parameter(s) {sorted(unknown)}; known: {sorted(DEFAULTS)}")
        super().__init__(**{**DEFAULTS, **params})
        if self.params["content"] not in CONTENT:
            raise ValueError(f"mem0: content must be one of {sorted(CONTENT)}, got {self.params['content']!r}")
        self.memory = None
        self._seen: dict[str, Any] = {}  # what open() found: mem0's version and which of its ranking parts run
        self._dropped: list[int] = []  # per extraction reply: entries mem0 could not have stored (mem0_replies)

    @property
    def makes_model_calls(self) -> bool:  # type: ignore[override]
        return bool(self.params["infer"])

    def ingests(self) -> str:
        extraction = "mem0's LLM facts drawn from " if self.params["infer"] else ""
        return extraction + CONTENT[self.params["content"]]

    @property
    def shares_sessions(self) -> bool:
        return bool(self.params["share_sessions"])

    def config(self) -> dict[str, Any]:
        return {**super().config(), **self._seen}

    def open(self, context: MemoryContext) -> None:
        super().open(context)
        os.environ["MEM0_DIR"] = str(context.store_dir / "mem0-home")
        self._main = import_mem0()
        from mem0 import Memory

        dims = int(context.embedding_cache.encode(["dimension probe"]).shape[1])
        llm = {"model": context.llm_model or "unused", "api_key": "membench-local",
               "openai_base_url": context.llm_base_url or "http://127.0.0.1:9/v1", **self.params["llm_params"]}
        self.memory = Memory.from_config({
            # a placeholder that is replaced below; its unreachable URL makes any stray use fail, not call out
            "embedder": {"provider": "openai", "config": {"embedding_dims": dims, "api_key": "unused",
                                                          "openai_base_url": "http://127.0.0.1:9/v1"}},
            "vector_store": {"provider": "qdrant", "config": {
                "path": str(context.store_dir / "qdrant"), "collection_name": "membench",
                "embedding_model_dims": dims, "on_disk": True}},
            "llm": {"provider": "openai", "config": llm},
            "history_db_path": str(context.store_dir / "history.db"),
        })
        self.memory.embedding_model = _CachedEmbedder(context.embedding_cache)
        layout_free(self.memory.vector_store, context.embedding_cache)
        relaxed = _relax_sync(self.memory)
        import mem0

        self._seen = {"mem0_version": mem0.__version__, "features": {
            "bm25": bool(getattr(self.memory.vector_store, "_has_bm25_slot", False)) and _has_module("fastembed"),
            "entity_boost": _has_module("spacy")}, "sqlite_sync_off": relaxed}
        if context.llm_base_url:  # every call goes to membench's endpoint, whatever the environment says
            from openai import OpenAI

            self.memory.llm.client = OpenAI(base_url=context.llm_base_url, api_key="membench-local", max_retries=0)
        if self.params["infer"]:
            self.memory.llm.generate_response = guarded(self.memory.llm.generate_response, self._dropped)

    def _ids(self, key: str) -> dict[str, str]:
        return {"user_id": USER, "run_id": key} if self.shares_sessions else {"user_id": USER}

    def _turns(self, log: SessionLog) -> tuple[list, list[str]]:
        turns = [e for e in read_events(log.path) if e.kind == "turn"]
        return turns, [unit_text(e) if self.params["content"] == "unit" else turn_text(e) for e in turns]

    def _adds(self, log: SessionLog) -> list[tuple[list, list[dict[str, str]]]]:
        """The session as mem0 `add` calls, (turns, messages) each: one turn per call, or `turns_per_add` turns
        with extraction on."""
        turns, texts = self._turns(log)
        step = 1 if not self.params["infer"] else max(1, int(self.params["turns_per_add"]))
        return [(turns[i:i + step],
                 [{"role": "assistant" if e.role == "assistant" else "user", "content": t,
                   **({"name": _name(e.speaker)} if e.speaker not in (None, "user", "assistant") else {})}
                  for e, t in zip(turns[i:i + step], texts[i:i + step])])
                for i in range(0, len(turns), step)]

    def _embedded_by_mem0(self, messages: list[dict[str, str]]) -> list[str]:
        """The texts mem0 embeds for one `add`: each message's content without extraction; with it, only the
        call's messages as one text, which it searches its memories with (the facts it extracts are new)."""
        if not self.params["infer"]:
            return [m["content"] for m in messages]
        from mem0.memory.utils import parse_messages

        return [parse_messages(messages)]

    def prepare(self, logs: Sequence[SessionLog], queries: Sequence[Query]) -> None:
        """Embed what mem0 will embed for the whole store, and every question, in one batch: mem0 embeds one
        text per call, and the encoder batches texts of equal length, which a single session seldom has."""
        self.context.embedding_cache.encode([text for log in logs for _, messages in self._adds(log)
                                             for text in self._embedded_by_mem0(messages)]
                                            + [q.text for q in queries])

    def ingest(self, log: SessionLog) -> None:
        adds = self._adds(log)
        # cached by prepare(); one batch here for a caller that skipped it
        self.context.embedding_cache.encode([t for _, messages in adds for t in self._embedded_by_mem0(messages)])
        self._mark_start(log.key)
        with _pinned_prompt_date(self._main, log.timestamp):
            for window, messages in adds:
                metadata = {"session": log.key, "refs": [e.ref for e in window]}
                if log.timestamp:
                    metadata["created_at"] = log.timestamp
                self.memory.add(messages, **self._ids(log.key), metadata=metadata, infer=bool(self.params["infer"]))

    def _mark_start(self, key: str) -> None:
        """Note where mem0's message log stood when this session began (its extraction prompts quote the
        last messages, so a redone session must not see those of its own cut-off attempt)."""
        row = self.memory.db.connection.execute("SELECT COALESCE(MAX(rowid), 0) FROM messages").fetchone()[0]
        atomic_write_text(self.context.store_dir / "mem0-started.json", json.dumps({"session": key, "rowid": row}))

    def forget(self, session_key: str) -> None:
        found = self.memory.get_all(filters={"user_id": USER, "session": session_key}, top_k=100000)
        for item in found.get("results", []):
            self.memory.delete(item["id"])
        mark = self.context.store_dir / "mem0-started.json"
        started = json.loads(mark.read_text(encoding="utf-8")) if mark.exists() else {}
        if started.get("session") == session_key:
            with self.memory.db.connection as con:
                con.execute("DELETE FROM messages WHERE rowid > ?", (started["rowid"],))

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        filters: dict[str, Any] = {"user_id": USER}
        if self.shares_sessions:
            filters["session"] = {"in": list(scope.sessions)}
        found = self.memory.search(query.text, top_k=k, filters=filters, threshold=float(self.params["threshold"]))
        return [Hit(tuple((item.get("metadata") or {}).get("refs") or ()), float(item.get("score") or 0.0),
                    item.get("memory") or "") for item in found.get("results", [])]

    def stats(self) -> dict[str, Any]:
        if not self.params["infer"]:
            return {}
        return {"extraction_replies": len(self._dropped), "extraction_entries_dropped": sum(self._dropped),
                "extraction_replies_with_drops": sum(1 for n in self._dropped if n)}

    def close(self) -> None:
        """mem0's own close leaves its local Qdrant client (and the folder's lock) open until garbage
        collection; close it here, so the same store can be opened again in this process (a resumed run)."""
        if self.memory is not None:
            with contextlib.suppress(Exception):
                self.memory.close()
            self.memory.vector_store.client.close()
            self.memory = None


def _relax_sync(memory) -> bool:
    """SQLite `synchronous=OFF` on mem0's history and the local Qdrant files: an fsync per memory made
    ingest disk-bound (~50 ms a message). Safe here: the store is a rebuildable cache, a killed process
    cannot corrupt SQLite in this mode (only an OS crash can), and membench's ingest ledger is fsync'ed."""
    connections = [getattr(getattr(memory, "db", None), "connection", None)]
    local = getattr(getattr(memory.vector_store, "client", None), "_client", None)
    for collection in (getattr(local, "collections", None) or {}).values():
        connections.append(getattr(getattr(collection, "storage", None), "storage", None))
    done = 0
    for con in connections:
        if con is not None:
            con.execute("PRAGMA synchronous=OFF")
            done += 1
    return done == len(connections)


def _name(speaker: str) -> str:
    """OpenAI message names allow letters, digits, _ and - only."""
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in speaker)[:64]


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
