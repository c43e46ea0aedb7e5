"""`engram`: engram-search (`pip install "membench[engram]"`, module `engram`), measured against its own claim.

engram-search says it reaches 94% on LoCoMo and 98% R@5 on LongMemEval with no LLM. Those figures use its
default embedder bge-large-en-v1.5 plus the bge-reranker-v2-m3 cross-encoder and its benchmark mode (sessions
chunked into multi-turn documents with speaker names and dates injected); the wheel ships no benchmark
script. This system measures the library as an offline product would run it with its `minilm` model
(`sentence-transformers/all-MiniLM-L6-v2`, which engram would download; here membench's embedding cache, the
same model packaged, so vectors equal `dense`'s) and no reranker (it too is a download): a different setting
from the published one, so its figure is not a replication of the claim.

Driven: the path its benchmark figures come from, `RetrievalPipeline(embedder, use_reranker=False).search(
question, documents, top_k=k, question_date=...)`: dense cosine + BM25 + person-name, quoted-phrase and
date-proximity boosts, fused by reciprocal rank (scores are RRF sums). That pipeline searches a list of
`Document`s handed to it, so the store is engram's own `FaissBackend` in the store folder (faiss flat index +
SQLite for text and metadata), one `Document` per turn (id = the turn's ref, metadata: session, timestamp), and
a search hands the pipeline the stored documents of the question's sessions (`shares_sessions`), with their
stored vectors. `forget` is `backend.delete(ids)`: engram's delete removes the SQLite rows only (faiss flat
rows stay, unreferenced), which this system honours by reading documents from SQLite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from membench.memory.systems.library import LibrarySystem, session_turns
from membench.memory.protocol import Hit, MemoryContext, Scope, SessionLog
from membench.sessions.view import Query

STORE = "engram"


class CachedEmbedder:
    """engram's `Embedder` interface over membench's embedding cache (MiniLM: no query prefix)."""

    needs_query_prefix = False

    def __init__(self, cache):
        self.cache = cache
        self.dimension = int(cache.encode(["dimension probe"]).shape[1])

    def encode_documents(self, texts, batch_size: int = 64) -> np.ndarray:  # noqa: ARG002 - engram's signature
        return self.cache.encode(list(texts))

    def encode_query(self, text: str) -> np.ndarray:
        return self.cache.encode([text])[0]

    def encode_queries(self, texts, batch_size: int = 32) -> np.ndarray:  # noqa: ARG002
        return self.cache.encode(list(texts))


class EngramSystem(LibrarySystem):
    name = "engram"
    stored_as = " as one engram Document {session, timestamp}"
    shared_store = True
    backend: Any = None

    def config(self) -> dict[str, Any]:
        return {**super().config(), "embedder": "minilm (membench cache)", "reranker": False}

    def open(self, context: MemoryContext) -> None:
        super().open(context)
        self.import_library("engram", "engram", "engram-search")
        from engram.backends.faiss_backend import FaissBackend
        from engram.retrieval.pipeline import RetrievalPipeline

        self.embedder = CachedEmbedder(context.embedding_cache)
        self.backend = FaissBackend(path=Path(context.store_dir) / STORE, dimension=self.embedder.dimension)
        self.pipeline = RetrievalPipeline(embedder=self.embedder, use_reranker=False)
        self._by_session: dict[str, list[tuple[str, str, dict, int]]] | None = None

    def _documents(self) -> dict[str, list[tuple[str, str, dict, int]]]:
        """The stored documents by session (read once per opening, after the ingest): id, text, metadata, row."""
        if self._by_session is None:
            self._by_session = {}
            rows = self.backend._conn.execute(
                "SELECT id, text, metadata, faiss_idx FROM documents ORDER BY faiss_idx").fetchall()
            for doc_id, text, meta, row in rows:
                metadata = json.loads(meta) if meta else {}
                self._by_session.setdefault(metadata.get("session"), []).append((doc_id, text, metadata, row))
            self._vectors = self.backend._index.reconstruct_n(0, self.backend._index.ntotal) \
                if self.backend._index.ntotal else np.zeros((0, self.embedder.dimension), np.float32)
        return self._by_session

    def ingest(self, log: SessionLog) -> None:
        from engram.backends.base import Document

        turns = session_turns(log, self.params["content"])
        if not turns:
            return
        vectors = self.embedder.encode_documents([t for _, t in turns])
        self.backend.add([Document(id=ref, text=text, embedding=vector.tolist(),
                                   metadata={"session": log.key, "timestamp": log.timestamp or ""})
                          for (ref, text), vector in zip(turns, vectors)])
        self._by_session = None

    def forget(self, session_key: str) -> None:
        rows = self.backend._conn.execute("SELECT id, metadata FROM documents").fetchall()
        self.backend.delete([doc_id for doc_id, meta in rows
                             if meta and json.loads(meta).get("session") == session_key])
        self._by_session = None

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        from engram.backends.base import Document

        if k <= 0:
            return []
        stored = self._documents()
        documents = [Document(id=doc_id, text=text, embedding=self._vectors[row], metadata=metadata)
                     for key in scope.sessions for doc_id, text, metadata, row in stored.get(key, ())]
        found = self.pipeline.search(query.text, documents, top_k=k, question_date=query.date)
        return [Hit((d.id,), float(d.score), d.text) for d in found]

    def close(self) -> None:
        if self.backend is not None:
            self.backend._conn.close()
            self.backend = None
