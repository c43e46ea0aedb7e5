"""`substring`: the naive floor -- count the query's keywords that occur as substrings of each document.

Keywords are the query's distinct lowercased `\\w+` tokens minus a small stopword list (`membench.adapters.text`);
a document scores the number of them found anywhere in its lowercased text (so "cook" also hits "cooking").
No weighting, no index: what a memory without retrieval would do with `grep`.
Ties: by haystack position, earliest first (`order_by_score`).
"""

from __future__ import annotations

from itertools import repeat
from operator import add, contains
from typing import Sequence

from membench.adapters.base import Adapter
from membench.sessions.view import Document, Query
from membench.adapters.text import HaystackCache, keywords, merge_params


class LoweredHaystack:
    """A haystack's texts lowercased, and for each keyword asked so far which texts contain it: built once for all
    of the haystack's questions (a LoCoMo conversation has ~200, and they share many keywords)."""

    def __init__(self, documents: Sequence[Document]):
        self.texts = [d.text.lower() for d in documents]
        self.columns: dict[str, list[bool]] = {}

    def contains(self, term: str) -> list[bool]:
        found = self.columns.get(term)
        if found is None:  # map() makes the pass over the texts without a Python frame per text
            found = self.columns[term] = list(map(contains, self.texts, repeat(term)))
        return found


class SubstringAdapter(Adapter):
    """Score = number of distinct query keywords contained in the document text."""

    name = "substring"
    defaults: dict = {}

    def __init__(self, **params):
        super().__init__(**merge_params(self.name, self.defaults, params))
        self._texts = HaystackCache(LoweredHaystack, maxsize=4)

    def score(self, query: Query, documents: Sequence[Document]) -> list[float]:
        terms = keywords(query.text)
        haystack = self._texts.get(documents)
        counts = [0] * len(haystack.texts)
        for term in terms:
            counts = list(map(add, counts, haystack.contains(term)))
        return list(map(float, counts))
