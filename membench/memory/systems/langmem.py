"""`langmem`: LangMem's store-backed memory search (`pip install "membench[langmem]"`) over a LangGraph store.

Driven: a LangGraph `InMemoryStore` with a semantic index (`index={"embed": ..., "dims": 384, "fields":
["content"]}`), memories written with `store.batch([PutOp(namespace, ref, {"content": text, "session": key})])`
(one call per session, so the embedder gets the session in one batch) and searched with LangMem's own tool,
`create_search_memory_tool(namespace=..., store=...)`, whose JSON answer (key, value, score per memory) becomes
the hits. LangMem's manage tool is not used for ingest: it stores under uuid keys and its create action takes
one memory per call; a put under the turn's ref is what its search then finds. Zero model calls: no LangMem
extraction (that needs an LLM), only the store's embedder.

Embedder: membench's embedding cache (the packaged MiniLM) as the index's `embed` function. Scores are the
store's exact cosine (numpy, float64 over the float32 vectors), so the ranking is `dense`'s.

One store per haystack (`shares_sessions` False), one namespace in it, LangMem's natural use for one user's
history: the store's filters compare values (`$eq`, `$ne`, `$gt`...) and have no `$in`, so a shared store
could not keep a search to a question's sessions. Persistence: LangGraph's embedded persistent store
(`SqliteStore`, langgraph-checkpoint-sqlite) needs the sqlite-vec extension, which a Python whose sqlite3
cannot load extensions (as here) cannot use; so what was put is also written to `langmem-store.jsonl` in the
store folder and put back into the `InMemoryStore` when the store is opened again (its vectors come from the
embedding cache: no model call). `forget` deletes a session's keys from both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from membench.memory.systems.library import LibrarySystem, session_turns
from membench.memory.protocol import Hit, MemoryContext, Scope, SessionLog
from membench.sessions.view import Query

NAMESPACE = ("memories", "membench")
SAVED = "langmem-store.jsonl"


def distinct_text_batches(records: list[dict]) -> list[list[dict]]:
    """The records in as few batches as keep each batch's texts distinct: LangGraph's `InMemoryStore.batch`
    (1.2.x) embeds a batch's distinct texts once each but then expects one vector per put, so a session that says
    the same thing twice (BEAM-500K has such turns) raises "Number of embeddings (n) does not match number of
    indices (n+1)". The k-th repeat of a text goes in the k-th batch."""
    batches: list[list[dict]] = []
    seen: dict[str, int] = {}
    for r in records:
        n = seen.get(r["content"], 0)
        seen[r["content"]] = n + 1
        if n == len(batches):
            batches.append([])
        batches[n].append(r)
    return batches


class LangMemSystem(LibrarySystem):
    name = "langmem"
    stored_as = " as one LangGraph store item {content, session}"
    store: Any = None

    def open(self, context: MemoryContext) -> None:
        super().open(context)
        langmem = self.import_library("langmem", "langmem", "langmem", "langgraph")
        from langgraph.store.memory import InMemoryStore

        cache = context.embedding_cache
        dims = int(cache.encode(["dimension probe"]).shape[1])
        self.store = InMemoryStore(index={"embed": lambda texts: cache.encode(list(texts)).tolist(), "dims": dims,
                                          "fields": ["content"]})
        self.tool = langmem.create_search_memory_tool(namespace=NAMESPACE, store=self.store)
        self.saved = Path(context.store_dir) / SAVED
        records = [json.loads(line) for line in self.saved.read_text(encoding="utf-8").splitlines()] \
            if self.saved.exists() else []
        self._put(records)

    def _put(self, records: list[dict]) -> None:
        from langgraph.store.base import PutOp

        for batch in distinct_text_batches(records):
            self.store.batch([PutOp(NAMESPACE, r["key"], {"content": r["content"], "session": r["session"]})
                              for r in batch])

    def ingest(self, log: SessionLog) -> None:
        records = [{"key": ref, "content": text, "session": log.key}
                   for ref, text in session_turns(log, self.params["content"])]
        self._put(records)
        with open(self.saved, "a", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in records)

    def forget(self, session_key: str) -> None:
        lines = self.saved.read_text(encoding="utf-8").splitlines() if self.saved.exists() else []
        kept = []
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut off mid-write: part of the cut-off session
            if record["session"] == session_key:
                self.store.delete(NAMESPACE, record["key"])
            else:
                kept.append(line)
        self.saved.write_text("".join(line + "\n" for line in kept), encoding="utf-8")

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        if k <= 0:
            return []
        found = json.loads(self.tool.invoke({"query": query.text, "limit": k}))
        return [Hit((m["key"],), float(m["score"]), m["value"]["content"]) for m in found]

    def close(self) -> None:
        self.store = None
