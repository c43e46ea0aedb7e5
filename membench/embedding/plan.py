"""The texts a run will embed, found before ranking: the embed stage embeds them once (sharded over jobs), so
rank jobs read vectors and never load the model for documents, and no question pays a model call of its own.

An adapter states what it embeds through `embedder()`, `document_texts()` and `query_texts()`
(`membench.adapters.base.Adapter`); an adapter that embeds nothing returns no texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from membench.sessions.reader import SessionStore
from membench.sessions.view import Query


@dataclass
class RunTexts:
    """What one run embeds: its distinct texts (first-seen order) and how many it would embed with repeats
    (every document of every question's haystack, plus the queries) -- the cost without sharing."""

    texts: list[str]
    occurrences: int


def run_texts(adapter, store: SessionStore, granularities: Iterable[str],
              queries: Sequence[tuple[Query, str]] | None = None) -> RunTexts:
    """The texts `adapter` embeds for `queries` ((query, haystack key) pairs; default: all of the store's)."""
    queries = list(store.queries(adapter.uses_metadata)) if queries is None else queries
    seen: dict[str, None] = {}
    sizes: dict[str, int] = {}
    for granularity in granularities:
        for key in dict.fromkeys(h for _, h in queries):
            texts = adapter.document_texts(store.haystack(key), granularity)
            sizes[key] = sizes.get(key, 0) + len(texts)
            seen.update(dict.fromkeys(texts))
    occurrences = 0
    for query, haystack in queries:
        texts = adapter.query_texts(query)
        occurrences += sizes.get(haystack, 0) + len(texts)
        seen.update(dict.fromkeys(texts))
    return RunTexts(list(seen), occurrences)
