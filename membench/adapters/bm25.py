"""`bm25`: rank-bm25's BM25Okapi over lowercased `\\w+` word tokens.

Why: the standard lexical baseline every memory system should beat. Unlike the upstream LongMemEval
variant (`bm25-upstream`) it lowercases and drops punctuation, so "Paris," matches "paris".
Ties: equal scores are ordered by haystack position, earliest first (`order_by_score`).
Parameters (BM25Okapi's own defaults): k1 = 1.5, b = 0.75, epsilon = 0.25 (idf floor = epsilon x mean idf).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from membench.adapters.base import Adapter
from membench.sessions.view import Document, Query
from membench.adapters.text import HaystackCache, merge_params, word_tokens


class BM25Index:
    """BM25Okapi over pre-tokenised documents, safe on an empty corpus or one without any token.

    `scores` gives exactly `BM25Okapi.get_scores` (same float operations on the same arrays, in the same order;
    a test compares them bit for bit) but reads each term's document frequencies from postings built once per
    haystack instead of looking the term up in every document's counts for every query."""

    def __init__(self, corpus: list[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25):
        self.size = len(corpus)
        self.vocabulary = frozenset(t for doc in corpus for t in doc)
        # BM25Okapi divides by the corpus size and the mean length: both must be non-zero.
        self._bm25 = BM25Okapi(corpus, k1=k1, b=b, epsilon=epsilon) if self.vocabulary else None
        if self._bm25 is not None:
            bm25 = self._bm25
            self._length_norm = bm25.k1 * (1 - bm25.b + bm25.b * np.array(bm25.doc_len) / bm25.avgdl)
            postings: dict[str, tuple[list[int], list[int]]] = {}
            for i, counts in enumerate(bm25.doc_freqs):
                for term, n in counts.items():
                    docs, freqs = postings.setdefault(term, ([], []))
                    docs.append(i)
                    freqs.append(n)
            self._postings = {t: (np.array(d, dtype=np.intp), np.array(f, dtype=np.int64))
                              for t, (d, f) in postings.items()}

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        if self._bm25 is None:
            return np.zeros(self.size)
        bm25, score = self._bm25, np.zeros(self.size)
        for term in terms:
            q_freq = np.zeros(self.size, dtype=np.int64)
            if term in self._postings:
                docs, freqs = self._postings[term]
                q_freq[docs] = freqs
            score += (bm25.idf.get(term) or 0) * (q_freq * (bm25.k1 + 1) / (q_freq + self._length_norm))
        return score


class BM25Adapter(Adapter):
    """BM25Okapi over lowercased word tokens; the index is cached per haystack."""

    name = "bm25"
    defaults = {"k1": 1.5, "b": 0.75, "epsilon": 0.25}
    tokenize: Callable[[str], list[str]] = staticmethod(word_tokens)

    def __init__(self, **params):
        super().__init__(**merge_params(self.name, self.defaults, params))
        self._indexes = HaystackCache(self._build_index, maxsize=4)

    def _build_index(self, documents: Sequence[Document]) -> BM25Index:
        p = self.params
        return BM25Index([self.tokenize(d.text) for d in documents], p["k1"], p["b"], p["epsilon"])

    def score(self, query: Query, documents: Sequence[Document]) -> np.ndarray:
        if not documents:
            return np.zeros(0)
        return self._indexes.get(documents).scores(self.tokenize(query.text))
