"""`txtai`: a txtai embeddings index (`pip install "membench[txtai]"`) as a memory store.

Driven: `txtai.Embeddings` with `content=True` (texts and fields in its SQLite document store) and the faiss
backend pinned to an exact flat index (`IDMap,Flat`; left to itself txtai switches to an approximate IVF index
once the index is large); `index` for the first session, `upsert` for the next ones, each document
`(ref, {"text": ..., "session": ...}, None)`; `Embeddings.search(question, k)`. After each session the index is
saved to the store folder (`save`), and loaded from there when the store is opened again. `forget` selects a
session's ids with txtai's SQL (`select id from txtai where session = :s`) and `delete`s them.

Embedder: txtai's `external` vectors method with membench's embedding cache as its transform (the packaged
MiniLM, `dense`'s vectors); scores are faiss inner products in float32.

One store per haystack (`shares_sessions` False): txtai filters with SQL after a `similar()` candidate search,
so a filter keeps to a question's sessions exactly only if the candidates are the whole index; a store per
haystack asks for nothing of the kind. Caveat: txtai's dense search drops every hit whose score is <= 0
(`if score > 0`, txtai/embeddings/search/base.py), so a search may return fewer than k hits; the run records
such searches as short and the report flags them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from membench.memory.systems.library import LibrarySystem, session_turns
from membench.memory.protocol import Hit, MemoryContext, Scope, SessionLog
from membench.sessions.view import Query

SAVED = "txtai"


class TxtaiSystem(LibrarySystem):
    name = "txtai"
    stored_as = " as one txtai document {text, session}"
    embeddings: Any = None

    def open(self, context: MemoryContext) -> None:
        super().open(context)
        txtai = self.import_library("txtai", "txtai", "txtai")
        cache = context.embedding_cache
        transform = {"transform": lambda texts: cache.encode([str(t) for t in texts])}
        self.path = Path(context.store_dir) / SAVED
        self.embeddings = txtai.Embeddings({"method": "external", "content": True, "backend": "faiss",
                                            "faiss": {"components": "IDMap,Flat"}, **transform})
        if (self.path / "config.json").exists() or (self.path / "config").exists():
            self.embeddings.load(str(self.path), config=transform)

    def _save(self) -> None:
        self.embeddings.save(str(self.path))

    def ingest(self, log: SessionLog) -> None:
        documents = [(ref, {"text": text, "session": log.key}, None)
                     for ref, text in session_turns(log, self.params["content"])]
        if not documents:
            return
        if self.embeddings.count():
            self.embeddings.upsert(documents)
        else:
            self.embeddings.index(documents)
        self._save()

    def forget(self, session_key: str) -> None:
        if not self.embeddings.count():
            return
        found = self.embeddings.search("select id from txtai where session = :s", limit=self.embeddings.count(),
                                       parameters={"s": session_key})
        if found:
            self.embeddings.delete([row["id"] for row in found])
            self._save()

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        if k <= 0 or not self.embeddings.count():
            return []
        return [Hit((row["id"],), float(row["score"]), row.get("text") or "")
                for row in self.embeddings.search(query.text, k)]

    def close(self) -> None:
        if self.embeddings is not None:
            self.embeddings.close()
            self.embeddings = None
