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

from collections import Counter
from typing import Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from membench.adapters.base import Adapter
from membench.sessions.view import Document, Haystack, Query
from membench.adapters.text import HaystackCache, merge_params


MEMO_TEXTS = 100_000  # texts whose frequencies a run keeps (then it starts anew): ~0.5 KB each


class FrequencyMemo:
    """Each text's (length, frequencies) as rank_bm25 counts them, computed once per run: LoCoMo-Plus gives each of
    its questions a haystack of its own drawn from the same sessions, and counting was most of bm25-upstream's time.
    The dicts are shared between indexes, which only read them."""

    def __init__(self, max_texts: int = MEMO_TEXTS):
        self.max_texts = max_texts
        self._memo: dict[str, tuple[int, dict[str, int]]] = {}

    def okapi(self, texts: Sequence[str]) -> BM25Okapi:
        """`BM25Okapi([t.split(" ") for t in texts])`, field for field: its `_initialize` with remembered counts,
        then its own `_calc_idf`."""
        if len(self._memo) > self.max_texts:
            self._memo = {}
        memo = self._memo
        okapi = BM25Okapi.__new__(BM25Okapi)
        okapi.k1, okapi.b, okapi.epsilon = 1.5, 0.75, 0.25  # BM25Okapi's defaults, as upstream builds it
        okapi.corpus_size, okapi.avgdl, okapi.tokenizer = 0, 0, None
        okapi.doc_freqs, okapi.idf, okapi.doc_len = [], {}, []
        nd: dict[str, int] = {}
        num_doc = 0
        for text in texts:
            entry = memo.get(text)
            if entry is None:
                words = text.split(" ")
                # rank_bm25's count: each word's count, in the order words first occur (as Counter keeps them)
                entry = memo[text] = (len(words), dict(Counter(words)))
            length, counts = entry
            okapi.doc_len.append(length)
            num_doc += length
            okapi.doc_freqs.append(counts)
            for word in counts:
                nd[word] = nd.get(word, 0) + 1
            okapi.corpus_size += 1
        okapi.avgdl = num_doc / okapi.corpus_size
        okapi._calc_idf(nd)
        return okapi


class UpstreamIndex:
    """rank_bm25's `BM25Okapi` over one haystack, scored as its `get_scores` scores: the same arrays and the same
    float operations in the same order, so the same bits. What differs is when: `get_scores` rebuilds a term's
    frequency column (a Python loop over every document) and the length part of the denominator on every query,
    while a haystack's questions (all of a LoCoMo conversation's) share them; here each is built once."""

    def __init__(self, documents: Sequence[Document], memo: FrequencyMemo | None = None):
        texts = [d.text for d in documents]  # never empty: "".split(" ") == [""]
        self.okapi = (memo or FrequencyMemo()).okapi(texts)
        okapi = self.okapi
        # get_scores' `self.k1 * (1 - self.b + self.b * doc_len / self.avgdl)`, element by element the same
        self.length_part = okapi.k1 * (1 - okapi.b + okapi.b * np.array(okapi.doc_len) / okapi.avgdl)
        self.columns: dict[str, np.ndarray] = {}

    def column(self, term: str) -> np.ndarray:
        """get_scores' `q_freq` for `term`."""
        found = self.columns.get(term)
        if found is None:
            found = self.columns[term] = np.array([(doc.get(term) or 0) for doc in self.okapi.doc_freqs])
        return found

    def get_scores(self, query: Sequence[str]) -> np.ndarray:
        okapi = self.okapi
        score = np.zeros(okapi.corpus_size)
        for q in query:
            q_freq = self.column(q)
            score += (okapi.idf.get(q) or 0) * (q_freq * (okapi.k1 + 1) / (q_freq + self.length_part))
        return score


class BM25UpstreamAdapter(Adapter):
    """Upstream LongMemEval flat-bm25, including its argsort-reversed tie order."""

    name = "bm25-upstream"
    defaults: dict = {}

    def __init__(self, **params):
        super().__init__(**merge_params(self.name, self.defaults, params))
        memo = FrequencyMemo()
        self._indexes = HaystackCache(lambda documents: UpstreamIndex(documents, memo), maxsize=4)

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
