"""The adapter contract: a name, a declared config, and `rank` over a gold-free haystack.

Tie rule (validity rule 4): equal scores are ordered by haystack position, earliest first. `order_by_score`
applies it, so every built-in adapter breaks ties the same documented way.
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from membench.sessions.checks import ScoreCountError
from membench.sessions.view import Document, Haystack, Query


class Adapter:
    """Base class for memory systems under test.

    Subclasses set `name`, optionally `uses_metadata` (oracle-ish question fields they read, e.g.
    ("question_type",)), and implement `score` (one float per document) or override `rank`.
    """

    name: ClassVar[str] = "adapter"
    uses_metadata: ClassVar[tuple[str, ...]] = ()
    granularities: ClassVar[tuple[str, ...]] = ("turn", "session", "trajectory")
    needs: ClassVar[frozenset[str]] = frozenset()  # what the workflow prepares for its runs (membench.runs.needs)

    def __init__(self, **params: Any):
        self.params = dict(params)

    def config(self) -> dict[str, Any]:
        """The declared configuration, recorded with every run for provenance."""
        return dict(self.params)

    def score(self, query: Query, documents: Sequence[Document]) -> Sequence[float]:
        raise NotImplementedError

    # -- embedding plan: what an embedding adapter will embed, so the embed stage can do it ahead ------------
    def embedder(self) -> Any:
        """The `membench.embedding.cache.EmbeddingCache` this adapter embeds through, or None if it embeds nothing."""
        return None

    def document_texts(self, haystack: Haystack, granularity: str) -> list[str]:
        """The texts this adapter embeds for a haystack's documents at `granularity` (none by default)."""
        return []

    def query_texts(self, query: Query) -> list[str]:
        """The texts this adapter embeds for a query (none by default)."""
        return []

    def rank(self, query: Query, haystack: Haystack, granularity: str, k: int) -> list[tuple[str, float]]:
        """Top-k (item_id, score) at `granularity`, best first, ties by haystack position."""
        documents = haystack.documents(granularity)
        scores = self.score(query, documents)
        if not isinstance(scores, np.ndarray):
            scores = list(scores)
        if len(scores) != len(documents):
            raise ScoreCountError(f"returned {len(scores)} scores from score() for {len(documents)} documents")
        return order_by_score(documents, scores, k)


def order_by_score(documents: Sequence[Document], scores: Iterable[float], k: int) -> list[tuple[str, float]]:
    """Sort by score descending, ties by document position ascending; keep the first k. A stable numpy lexsort
    on (-score, position), the very order of a stable sort on that key, without a Python key per document; NaN
    scores (whose order a sort leaves undefined) take the plain sort, as before."""
    values = np.asarray(scores if isinstance(scores, np.ndarray) else list(scores), dtype=np.float64)
    n = min(len(documents), len(values))  # as zip() pairs them
    values = values[:n]
    if np.isnan(values).any():
        pairs = sorted(zip(documents, (float(s) for s in values)), key=lambda p: (-p[1], p[0].position))
        return [(doc.item_id, score) for doc, score in pairs[:k]]
    positions = np.fromiter((documents[i].position for i in range(n)), dtype=np.int64, count=n)
    order = np.lexsort((positions, -values))[:max(k, 0)]
    return [(documents[i].item_id, float(values[i])) for i in order.tolist()]
