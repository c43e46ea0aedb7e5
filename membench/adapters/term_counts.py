"""A document's terms as counts over a shared vocabulary, remembered by text: what a BM25 index is built from.

Why: LoCoMo-Plus gives each of its 401 questions a haystack of its own, drawn from the same 673 sessions, so a BM25
run tokenised and counted the same turns hundreds of times, and building the index was most of the run. A run now
counts each text once (`TermCache`) and an index joins the counts (`membench.adapters.bm25.BM25Index`).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, NamedTuple, Sequence

import numpy as np


class TermCounts(NamedTuple):
    """One document: its distinct terms (vocabulary ids, in the order each first occurs), how often each occurs,
    and its length in tokens."""

    ids: np.ndarray
    counts: np.ndarray
    length: int


class Vocabulary:
    """Term <-> integer id, for the indexes built from one `TermCache` (ids mean nothing across vocabularies)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.terms: list[str] = []

    def __len__(self) -> int:
        return len(self.terms)

    def _add(self, term: str) -> int:
        self.ids[term] = len(self.terms)
        self.terms.append(term)
        return self.ids[term]

    def count(self, tokens: Sequence[str]) -> TermCounts:
        frequencies = Counter(tokens)  # insertion order = first occurrence, as rank-bm25 counts them
        ids = self.ids
        term_ids = [ids[t] if t in ids else self._add(t) for t in frequencies]
        return TermCounts(np.array(term_ids, dtype=np.int64), np.array(list(frequencies.values()), dtype=np.int64),
                          len(tokens))


class TermCache:
    """Each text's `TermCounts` under one analyser, computed once. Bounded: when the counts kept or the vocabulary
    pass their caps, the next `count_all` starts both anew before it counts, so an index never mixes ids of two
    vocabularies."""

    def __init__(self, analyze: Callable[[str], Sequence[str]], max_ids: int = 4_000_000,
                 max_terms: int = 500_000):
        self._analyze = analyze
        self._max_ids, self._max_terms = max_ids, max_terms
        self._memo: dict[str, TermCounts] = {}
        self._ids_kept = 0
        self.vocabulary = Vocabulary()

    def count_all(self, texts: Iterable[str]) -> tuple[list[TermCounts], Vocabulary]:
        """One index's documents, counted, and the vocabulary their ids belong to. Where the caps were passed, the
        cache starts anew here, before the first document, never between two documents of one index."""
        if self._ids_kept > self._max_ids or len(self.vocabulary) > self._max_terms:
            self._memo.clear()
            self._ids_kept = 0
            self.vocabulary = Vocabulary()
        return [self._counts(t) for t in texts], self.vocabulary

    def _counts(self, text: str) -> TermCounts:
        counts = self._memo.get(text)
        if counts is None:
            counts = self._memo[text] = self.vocabulary.count(self._analyze(text))
            self._ids_kept += len(counts.ids)
        return counts
