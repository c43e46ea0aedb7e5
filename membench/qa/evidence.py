"""Where a question's gold evidence lies, for answer mode: whether a run's top k holds it, and which sessions hold it.

These tie retrieval to answers without mixing them: the qa stage records, per question, the share of its gold items
(:func:`membench.datasets.gold.relevant_items` at the granularity QA reads) that the run's top k contains, so
accuracy can be split by "evidence in the top k" (every gold item there) and "evidence missed" (at least one not
there); and the `oracle` baseline answers from exactly the sessions holding a gold item (at any granularity the
qrels name: a gold turn stands for its session), in haystack order. A question without gold has no share (NaN) and
an empty oracle context.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from membench.qa.answer import TurnIndex

__all__ = ["evidence_share", "evidence_sessions"]


def evidence_share(top: Iterable[str], gold: set[str] | None) -> float:
    """The share of ``gold`` that ``top`` contains (1.0: all of it in the top k); NaN without gold."""
    if not gold:
        return float("nan")
    return len(gold & {str(i) for i in top}) / len(gold)


def evidence_sessions(qrels: pd.DataFrame, questions: Iterable[Mapping], index: TurnIndex) -> dict[str, list[str]]:
    """question id -> the ids of the sessions holding its gold, in haystack order: gold sessions as named, gold
    turns standing for theirs (looked up within the question's haystack, where item ids are unique)."""
    haystack = {str(q["question_id"]): str(q["haystack_id"]) for q in questions}
    part = qrels[(qrels.relevance > 0) & qrels.question_id.astype(str).isin(set(haystack))]
    found: dict[str, set[str]] = {q: set() for q in haystack}
    for qid, granularity, item in zip(part.question_id.astype(str), part.granularity, part.item_id.astype(str)):
        session = item if granularity == "session" else index.session_of(haystack[qid], item)
        if session is not None:
            found[qid].add(session)
    return {q: [s for s in index.session_ids(haystack[q]) if s in found[q]] for q in haystack}
