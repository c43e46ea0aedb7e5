"""`chroma`: Chroma (`pip install "membench[chroma]"`), the plain vector store most agent memories sit on.

Driven through its own client API: a `PersistentClient` in the store folder (SQLite plus an HNSW segment,
reopened by a rerun), one collection in cosine space, `collection.add` per session (one record per turn: the
turn's ref as id, its text as document, the session key as metadata) and `collection.query` with
`where={"session": {"$in": <the question's sessions>}}`, so one store holds every session once
(`shares_sessions`). `forget` is `collection.delete(where={"session": key})`.

Embedder: membench's embedding cache (the packaged MiniLM): vectors are handed to `add` and `query`, so
Chroma's default embedding function (an ONNX MiniLM it would download) is never called. Telemetry off
(`Settings(anonymized_telemetry=False)`, `ANONYMIZED_TELEMETRY=False` before import). Score = 1 - cosine
distance. Caveat: the index is HNSW, approximate; `ef_search` is raised (default 1000 here, above a LoCoMo
conversation's size) so a filtered top 50 is in practice exact, and Chroma computes in float32, so near-equal
scores may come out in another order than `dense`'s float64 ones.
"""

from __future__ import annotations

from typing import Any, Sequence

from membench.memory.systems.library import LibrarySystem, session_turns
from membench.memory.protocol import Hit, MemoryContext, Scope, SessionLog
from membench.sessions.view import Query

COLLECTION = "membench"


class ChromaSystem(LibrarySystem):
    name = "chroma"
    stored_as = " as one Chroma record, session key as metadata"
    shared_store = True
    collection: Any = None
    defaults: dict[str, Any] = {"content": "message", "ef_search": 1000, "ef_construction": 200}

    def open(self, context: MemoryContext) -> None:
        super().open(context)
        chromadb = self.import_library("chromadb", "chroma", "chromadb")
        from chromadb.config import Settings

        self.client = chromadb.PersistentClient(path=str(context.store_dir / "chroma"),
                                                settings=Settings(anonymized_telemetry=False))
        self.collection = self.client.get_or_create_collection(COLLECTION, embedding_function=None, configuration={
            "hnsw": {"space": "cosine", "ef_search": int(self.params["ef_search"]),
                     "ef_construction": int(self.params["ef_construction"])}})

    def ingest(self, log: SessionLog) -> None:
        turns = session_turns(log, self.params["content"])
        if not turns:
            return
        refs, texts = zip(*turns)
        self.collection.add(ids=list(refs), documents=list(texts), metadatas=[{"session": log.key}] * len(refs),
                            embeddings=self.context.embedding_cache.encode(list(texts)))

    def forget(self, session_key: str) -> None:
        self.collection.delete(where={"session": session_key})

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        if k <= 0 or not scope.sessions:
            return []
        # Chroma's $in wants two values or more; one session is an equality
        sessions = list(scope.sessions)
        where = {"session": {"$in": sessions}} if len(sessions) > 1 else {"session": sessions[0]}
        found = self.collection.query(query_embeddings=self.context.embedding_cache.encode([query.text]),
                                      n_results=k, where=where, include=["documents", "distances"])
        return [Hit((ref,), 1.0 - float(distance), text or "")
                for ref, distance, text in zip(found["ids"][0], found["distances"][0], found["documents"][0])]

    def close(self) -> None:
        self.collection = None
