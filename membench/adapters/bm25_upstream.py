"""`bm25-upstream`: the LongMemEval retrieval baseline exactly as upstream runs it, for parity.

Upstream (xiaowu0162/LongMemEval, src/retrieval/run_retrieval.py, `flat-bm25`): `BM25Okapi` with its
defaults over `doc.split(" ")` (case and punctuation kept), the query split the same way, and the order
`numpy.argsort(scores)[::-1]`.

Tie rule -- the one documented EXCEPTION to `order_by_score`: ties are broken exactly as upstream's
reversed argsort breaks them, so parity numbers match to the 4th decimal. For short corpora numpy's default
argsort is stable (insertion sort below 17 items), so reversing it puts tied documents in *descending*
haystack position (the later document first). For longer corpora numpy's default sort is not stable and
its tie order depends on the numpy version and the CPU (numpy 2.x uses SIMD sorts, e.g. AVX-512): it is
deterministic on one machine, but tied documents -- typically the zero-score tail -- may come out in another
order than on upstream's machine. Use `bm25` for a ranking under the project rule.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from membench.adapters.base import Adapter
from membench.sessions.view import Document, Haystack, Query
from membench.adapters.text import HaystackCache, merge_params


def _build(documents: Sequence[Document]) -> BM25Okapi:
    return BM25Okapi([d.text.split(" ") for d in documents])  # never empty: "".split(" ") == [""]


class BM25UpstreamAdapter(Adapter):
    """Upstream LongMemEval flat-bm25, including its argsort-reversed tie order."""

    name = "bm25-upstream"
    defaults: dict = {}

    def __init__(self, **params):
        super().__init__(**merge_params(self.name, self.defaults, params))
        self._indexes = HaystackCache(_build, maxsize=4)

    def score(self, query: Query, documents: Sequence[Document]) -> np.ndarray:
        if not documents:
            return np.zeros(0)
        return self._indexes.get(documents).get_scores(query.text.split(" "))

    def rank(self, query: Query, haystack: Haystack, granularity: str, k: int) -> list[tuple[str, float]]:
        documents = haystack.documents(granularity)
        if not documents or k <= 0:
            return []
        scores = np.asarray(self.score(query, documents))
        order = np.argsort(scores)[::-1]  # upstream's exact order, ties included
        return [(documents[i].item_id, float(scores[i])) for i in order[:k]]
