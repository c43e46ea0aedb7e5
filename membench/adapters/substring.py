"""`substring`: the naive floor -- count the query's keywords that occur as substrings of each document.

Keywords are the query's distinct lowercased `\\w+` tokens minus a small stopword list (`membench.adapters.text`);
a document scores the number of them found anywhere in its lowercased text (so "cook" also hits "cooking").
No weighting, no index: what a memory without retrieval would do with `grep`.
Ties: by haystack position, earliest first (`order_by_score`).
"""

from __future__ import annotations

from typing import Sequence

from membench.adapters.base import Adapter
from membench.sessions.view import Document, Query
from membench.adapters.text import keywords, merge_params


class SubstringAdapter(Adapter):
    """Score = number of distinct query keywords contained in the document text."""

    name = "substring"
    defaults: dict = {}

    def __init__(self, **params):
        super().__init__(**merge_params(self.name, self.defaults, params))

    def score(self, query: Query, documents: Sequence[Document]) -> list[float]:
        terms = keywords(query.text)
        return [float(sum(1 for t in terms if t in text)) for text in (d.text.lower() for d in documents)]
