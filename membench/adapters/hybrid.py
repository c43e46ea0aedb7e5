"""`hybrid`: lexical and semantic evidence added up -- `bm25 / max(bm25) + weight * cosine`.

Why: BM25 finds rare exact words (names, numbers), MiniLM finds paraphrases; a question often needs both.
BM25 is the `bm25` adapter (lowercased `\\w+` tokens, BM25Okapi defaults), divided by its maximum over the
haystack so it lies in [0, 1]; when that maximum is 0 or less (no query word matches) the lexical part is 0.
Cosine is the `dense` adapter's MiniLM cosine. `weight` (default 1.0) is declared in config.
Ties: haystack position, earliest first (`order_by_score`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from membench.adapters.base import Adapter
from membench.adapters.bm25 import BM25Adapter
from membench.adapters.dense import DenseAdapter
from membench.sessions.view import Document, Haystack, Query
from membench.adapters.text import merge_params


class HybridAdapter(Adapter):
    """Max-normalised BM25 plus weighted MiniLM cosine."""

    name = "hybrid"
    needs = frozenset({"embeddings"})  # the embed stage embeds its texts first
    defaults: dict[str, Any] = {"weight": 1.0, **BM25Adapter.defaults, **DenseAdapter.defaults}

    def __init__(self, **params):
        super().__init__(**merge_params(self.name, self.defaults, params))
        self.lexical = BM25Adapter(**{k: self.params[k] for k in BM25Adapter.defaults})
        self.semantic = DenseAdapter(**{k: self.params[k] for k in DenseAdapter.defaults})

    def bind_context(self, context: Any) -> None:
        self.semantic.bind_context(context)

    def embedder(self):
        return self.semantic.embedder()

    def document_texts(self, haystack: Haystack, granularity: str) -> list[str]:
        return self.semantic.document_texts(haystack, granularity)

    def query_texts(self, query: Query) -> list[str]:
        return self.semantic.query_texts(query)

    def score(self, query: Query, documents: Sequence[Document]) -> np.ndarray:
        if not documents:
            return np.zeros(0)
        lexical = np.asarray(self.lexical.score(query, documents), dtype=np.float64)
        top = lexical.max()
        lexical = lexical / top if top > 0 else np.zeros_like(lexical)
        return lexical + float(self.params["weight"]) * self.semantic.score(query, documents)
