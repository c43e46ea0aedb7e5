"""`bm25`: rank-bm25's BM25Okapi over lowercased `\\w+` word tokens.

Why: the standard lexical baseline every memory system should beat. Unlike the upstream LongMemEval
variant (`bm25-upstream`) it lowercases and drops punctuation, so "Paris," matches "paris".
Ties: equal scores are ordered by haystack position, earliest first (`order_by_score`).
Parameters (BM25Okapi's own defaults): k1 = 1.5, b = 0.75, epsilon = 0.25 (idf floor = epsilon x mean idf).
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Callable, Sequence

import numpy as np

from membench.adapters.base import Adapter
from membench.adapters.term_counts import TermCache, TermCounts, Vocabulary
from membench.sessions.view import Document, Query
from membench.adapters.text import HaystackCache, merge_params, word_tokens


class BM25Index:
    """BM25Okapi over counted documents, safe on an empty corpus or one without any token.

    `scores` gives exactly `BM25Okapi(corpus).get_scores` (the same float operations on the same numbers, in the same
    order, idf's floor included; tests/test_rank_speed.py compares them bit for bit on real haystacks), but the
    documents come counted (`membench.adapters.term_counts`), so a text in many haystacks is tokenised once, and each
    term's documents are read from postings built once per haystack, not looked up in every document per query."""

    def __init__(self, documents: Sequence[TermCounts], vocabulary: Vocabulary, k1: float = 1.5, b: float = 0.75,
                 epsilon: float = 0.25):
        self.size, self.k1 = len(documents), k1
        ids = np.concatenate([d.ids for d in documents]) if documents else np.zeros(0, dtype=np.int64)
        self._slot: dict[str, int] = {}
        self.vocabulary: frozenset[str] = frozenset()
        if not ids.size:  # BM25Okapi divides by the corpus size and the mean length: both must be non-zero
            return
        owner = np.repeat(np.arange(self.size, dtype=np.intp), [len(d.ids) for d in documents])
        by_term = np.argsort(ids, kind="stable")  # each term's documents together, in document order
        sorted_ids = ids[by_term]
        starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
        df = np.diff(np.r_[starts, ids.size])
        seen = np.argsort(by_term[starts])  # terms in the order they first occur: rank-bm25's idf dict order
        self._owner, self._freq = owner[by_term], np.concatenate([d.counts for d in documents])[by_term]
        self._start, self._df = starts[seen].tolist(), df[seen].tolist()
        self._idf = _okapi_idf(self._df, self.size, epsilon)
        terms = vocabulary.terms
        self._slot = {terms[t]: j for j, t in enumerate(sorted_ids[starts][seen].tolist())}
        self.vocabulary = frozenset(self._slot)
        lengths = [d.length for d in documents]
        avgdl = sum(lengths) / self.size
        self._length_norm = k1 * (1 - b + b * np.array(lengths) / avgdl)

    @classmethod
    def of_tokens(cls, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75,
                  epsilon: float = 0.25) -> "BM25Index":
        """The index of tokenised documents, counted here (nothing remembered)."""
        vocabulary = Vocabulary()
        return cls([vocabulary.count(doc) for doc in corpus], vocabulary, k1, b, epsilon)

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        score = np.zeros(self.size)
        if not self._slot:
            return score
        for term in terms:
            q_freq = np.zeros(self.size, dtype=np.int64)
            j = self._slot.get(term)
            idf = 0
            if j is not None:
                first, last = self._start[j], self._start[j] + self._df[j]
                q_freq[self._owner[first:last]] = self._freq[first:last]
                idf = self._idf[j] or 0
            score += idf * (q_freq * (self.k1 + 1) / (q_freq + self._length_norm))
        return score


def _okapi_idf(document_frequencies: list[int], size: int, epsilon: float) -> list[float]:
    """BM25Okapi's idf, term by term in its order: log(N - df + 0.5) - log(df + 0.5), each negative one raised to
    epsilon times the mean (summed left to right, as rank-bm25 sums it)."""
    of = {df: math.log(size - df + 0.5) - math.log(df + 0.5) for df in set(document_frequencies)}
    idf = [of[df] for df in document_frequencies]
    floor = epsilon * (functools.reduce(operator.add, idf, 0) / len(idf))
    return [floor if value < 0 else value for value in idf]


class BM25Adapter(Adapter):
    """BM25Okapi over lowercased word tokens; the index is cached per haystack."""

    name = "bm25"
    defaults = {"k1": 1.5, "b": 0.75, "epsilon": 0.25}
    tokenize: Callable[[str], list[str]] = staticmethod(word_tokens)

    def __init__(self, **params):
        super().__init__(**merge_params(self.name, self.defaults, params))
        self._indexes = HaystackCache(self._build_index, maxsize=4)
        self._terms = TermCache(self.tokenize)

    def _build_index(self, documents: Sequence[Document]) -> BM25Index:
        p = self.params
        return BM25Index(*self._terms.count_all(d.text for d in documents), p["k1"], p["b"], p["epsilon"])

    def score(self, query: Query, documents: Sequence[Document]) -> np.ndarray:
        if not documents:
            return np.zeros(0)
        return self._indexes.get(documents).scores(self.tokenize(query.text))
