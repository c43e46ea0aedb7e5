"""`bm25-time`: `bm25` plus the question's date cues.

Why: many LongMemEval / LoCoMo questions name a time ("what did I buy last week?", "on May 8") or ask for
the current value of something that changed ("where do I live now?"). Lexical scores cannot see either.

What it does, on top of `bm25`'s scores:
1. **Date window.** Date cues in the question (the list is in :mod:`membench.dates`) are resolved against a
   reference date -- the question's own date (LongMemEval `question_date`), else the latest timestamp in the
   haystack (LoCoMo questions come after the conversation). Every cue becomes a date interval, widened by
   `slack_days` on each side.
   A document whose timestamp falls in any interval has its score multiplied by `boost`; one outside all
   intervals by `dampen` (a negative score is divided instead); one without a timestamp is left as is. Questions without a cue are plain `bm25`.
2. **Recency tiebreak.** If the wording suggests a knowledge update ("current", "currently", "now",
   "latest", "still", "most recent", "these days", "nowadays", "anymore", "at the moment"), scores are
   rounded to `recency_tie_decimals` and equal rounded scores put the newer document first (then haystack
   position); the reported scores are the rounded ones, so the list stays sorted by score.
Otherwise ties follow `order_by_score`: haystack position, earliest first.
`question_type` metadata is *not* used, so this adapter declares no oracle fields.
"""

from __future__ import annotations

from datetime import datetime
from typing import Iterable, Sequence

import numpy as np

from membench.adapters.base import order_by_score
from membench.adapters.bm25 import BM25Adapter
from membench.adapters.date_cues import Interval, apply_windows, date_windows, is_knowledge_update, parse_date, reference_date
from membench.sessions.view import Document, Haystack, Query
from membench.adapters.text import merge_params


class BM25TimeAdapter(BM25Adapter):
    """BM25 with date-window boosting and a recency tiebreak for knowledge-update wording."""

    name = "bm25-time"
    defaults = {**BM25Adapter.defaults, "boost": 1.5, "dampen": 0.75, "slack_days": 1,
                "recency_tiebreak": True, "recency_tie_decimals": 3}

    def __init__(self, **params):
        merged = merge_params(self.name, self.defaults, params)
        super().__init__(**{k: merged[k] for k in BM25Adapter.defaults})
        self.params = merged

    def windows(self, query: Query, documents: Sequence[Document]) -> list[Interval]:
        reference = reference_date(query.date, (d.timestamp for d in documents))
        return date_windows(query.text, reference, int(self.params["slack_days"]))

    def score(self, query: Query, documents: Sequence[Document]) -> np.ndarray:
        base = super().score(query, documents)
        return apply_windows(base, [d.timestamp for d in documents], self.windows(query, documents),
                             float(self.params["boost"]), float(self.params["dampen"]))

    def rank(self, query: Query, haystack: Haystack, granularity: str, k: int) -> list[tuple[str, float]]:
        documents = haystack.documents(granularity)
        scores = self.score(query, documents)
        if not (self.params["recency_tiebreak"] and is_knowledge_update(query.text)):
            return order_by_score(documents, scores, k)
        return order_by_recency(documents, scores, k, int(self.params["recency_tie_decimals"]))


def order_by_recency(documents: Sequence[Document], scores: Iterable[float], k: int,
                     decimals: int) -> list[tuple[str, float]]:
    """Rounded score desc, then newer timestamp first (undated last), then haystack position asc."""
    def key(pair):
        doc, score = pair
        stamp = parse_date(doc.timestamp)
        age = (datetime.max - stamp).total_seconds() if stamp else float("inf")
        return (-score, age, doc.position)

    pairs = sorted(zip(documents, (round(float(s), decimals) for s in scores)), key=key)
    return [(doc.item_id, score) for doc, score in pairs[:max(k, 0)]]
