"""`bm25-v2`: a better-read BM25 -- stems, bigrams, a small query expansion, and bm25-time's date windows.

Why: `bm25` misses "cooked" for "cooking" and cannot tell "New York" from "new" + "york"; v1 stays unchanged
so its numbers remain reproducible, and every improvement lives here.

Terms: lowercased `\\w+` tokens, stopwords removed (`membench.adapters.text.STOPWORDS`), each stemmed with
`membench.adapters.text.stem` (a light -s/-es/-ies/-ed/-ing/-e stripper, `stemming`; no new dependency), plus the bigrams of
adjacent kept stems ("new york"), when `bigrams` is on. Documents and query are analysed the same way.
Query expansion (deterministic, scored with weight `expansion_weight`, default 0.5, on top of the query's
own BM25 score); only terms that occur in the haystack are added, in sorted order:
- synonyms (`synonyms`): the other members of the query stem's group in the fixed `SYNONYM_GROUPS` table;
- morphological variants (`morph_variants`): haystack stems of 5+ letters that extend or are extended by a
  query stem of 5+ letters by at most 3 letters (e.g. "photograph" <-> "photography", "collect" <-> "collection").
Date cues: bm25-time's windows (parsed in `membench.dates`; `boost` / `dampen` / `slack_days`, same defaults);
no recency tiebreak.
Ties: haystack position, earliest first (`order_by_score`).
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from membench.adapters.base import Adapter
from membench.adapters.bm25 import BM25Index
from membench.adapters.date_cues import apply_windows, date_windows, reference_date
from membench.adapters.term_counts import TermCache, TermCounts, Vocabulary
from membench.sessions.view import Document, Query
from membench.adapters.text import STOPWORDS, HaystackCache, merge_params, stem, word_tokens

SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("movie", "film"), ("buy", "purchase", "bought"), ("car", "vehicle"), ("job", "career", "occupation"),
    ("doctor", "physician"), ("trip", "travel", "vacation", "journey", "holiday"), ("house", "home"),
    ("kid", "child", "children"), ("dog", "puppy"), ("cat", "kitten"), ("phone", "smartphone", "cellphone"),
    ("gift", "present"), ("photo", "picture", "photograph"), ("start", "begin", "began", "started"),
    ("fix", "repair"), ("shop", "store"), ("big", "large"), ("small", "little"), ("sick", "ill"),
    ("friend", "buddy", "pal"), ("mom", "mother"), ("dad", "father"), ("exercise", "workout"),
    ("bike", "bicycle"), ("book", "novel"), ("class", "course"), ("medicine", "medication"),
    ("salary", "income", "wage"), ("price", "cost"), ("tv", "television"), ("laptop", "computer"),
    ("sneaker", "shoe"), ("meeting", "appointment"), ("spouse", "partner"),
)

_GROUP_OF: dict[str, tuple[str, ...]] = {}
for _group in SYNONYM_GROUPS:
    _stems = tuple(sorted({stem(w) for w in _group}))
    for _s in _stems:
        _GROUP_OF[_s] = _stems


def analyze(text: str, bigrams: bool = True, stemming: bool = True) -> list[str]:
    """Stemmed (optionally) content words, then (optionally) the bigrams of adjacent ones joined by a space."""
    stems = [stem(t) if stemming else t for t in word_tokens(text) if t not in STOPWORDS]
    if not bigrams:
        return stems
    return stems + [f"{a} {b}" for a, b in zip(stems, stems[1:])]


class V2Index:
    """BM25 over analysed terms, plus the haystack vocabulary for expansion."""

    def __init__(self, documents: Sequence[TermCounts], vocabulary: Vocabulary, k1: float, b: float, epsilon: float):
        self.bm25 = BM25Index(documents, vocabulary, k1, b, epsilon)
        self.vocabulary = self.bm25.vocabulary
        self.by_prefix: dict[str, list[str]] = {}
        for term in sorted(self.vocabulary):
            if len(term) >= 5 and " " not in term:
                self.by_prefix.setdefault(term[:5], []).append(term)


class BM25V2Adapter(Adapter):
    """Stemmed unigram+bigram BM25 with synonym/morphological expansion and date windows."""

    name = "bm25-v2"
    defaults: dict[str, Any] = {"k1": 1.5, "b": 0.75, "epsilon": 0.25, "stemming": True, "bigrams": True,
                                "synonyms": True, "morph_variants": True, "expansion_weight": 0.5, "boost": 1.5,
                                "dampen": 0.75, "slack_days": 1}

    def __init__(self, **params):
        super().__init__(**merge_params(self.name, self.defaults, params))
        self._indexes = HaystackCache(self._build_index, maxsize=4)
        self._terms = TermCache(functools.partial(analyze, bigrams=bool(self.params["bigrams"]),
                                                  stemming=bool(self.params["stemming"])))

    def _build_index(self, documents: Sequence[Document]) -> V2Index:
        p = self.params
        return V2Index(*self._terms.count_all(d.text for d in documents), p["k1"], p["b"], p["epsilon"])

    def expansions(self, query_stems: Sequence[str], index: V2Index) -> list[str]:
        """Extra query terms found in the haystack: synonyms and near-identical longer/shorter stems."""
        own = set(query_stems)
        extra: set[str] = set()
        for q in own:
            if self.params["synonyms"]:
                extra.update(s for s in _GROUP_OF.get(q, ()) if s in index.vocabulary)
            if self.params["morph_variants"] and len(q) >= 5:
                for v in index.by_prefix.get(q[:5], ()):
                    if abs(len(v) - len(q)) <= 3 and (v.startswith(q) or q.startswith(v)):
                        extra.add(v)
        return sorted(extra - own)

    def score(self, query: Query, documents: Sequence[Document]) -> np.ndarray:
        if not documents:
            return np.zeros(0)
        index = self._indexes.get(documents)
        terms = analyze(query.text, bool(self.params["bigrams"]), bool(self.params["stemming"]))
        scores = index.bm25.scores(terms)
        weight = float(self.params["expansion_weight"])
        extra = self.expansions([t for t in terms if " " not in t], index)
        if extra and weight:
            scores = scores + weight * index.bm25.scores(extra)
        stamps = [d.timestamp for d in documents]
        windows = date_windows(query.text, reference_date(query.date, stamps), int(self.params["slack_days"]))
        return apply_windows(scores, stamps, windows, float(self.params["boost"]), float(self.params["dampen"]))
