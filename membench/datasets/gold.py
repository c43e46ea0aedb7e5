"""Questions whose gold is empty or partly dangling, and how many of each (validity rule 6).

A parser marks such a question in the questions table (`gold_issue`); the scorer leaves a question with no
gold out of retrieval scoring under that reason, and the report and summary.json count every reason its
benchmark can give, zeros included, so a reader sees what was checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

# reason -> what it means; such a question is left out of retrieval scoring (no empty gold set is scored)
LEFT_OUT = {
    "empty_evidence": "QA whose evidence list is empty (LoCoMo's own scorer counts it as recall 1.0)",
    "dangling_evidence": "QA whose every evidence entry names no turn of its conversation",
    "unlabeled": "query without any relevance label",
    "no_relevant_label": "query whose labels are all below the relevance threshold",
    "abstention": "abstention question (`_abs`): nothing to find, as the benchmark's own scorer skips it",
    "no_target": "question without a user-side evidence turn, as the benchmark's own scorer skips it",
    "no_gold": "question without gold to score against (its parser named no reason)",
    "no_source_ids": "question whose `source_chat_ids` is absent or null (BEAM: every abstention question)",
    "empty_source_ids": "question whose `source_chat_ids` is an empty list (BEAM)",
}
# reason -> what it means; such a question is scored on the part of its gold that resolves
PARTIAL = {
    "partly_dangling_evidence": "QA with evidence entries that name no turn beside ones that do: scored on "
                                "those that do",
}


def issue_of(question: Mapping[str, Any]) -> str | None:
    """The question's `gold_issue`, or None (also for a questions table written before the column existed)."""
    value = question.get("gold_issue")
    return None if value is None or pd.isna(value) else str(value)


def left_out_reason(question: Mapping[str, Any]) -> str:
    """Why a question with no gold is left out: its parser's reason, else `no_gold`."""
    return issue_of(question) or "no_gold"


def coverage(questions: Iterable[Mapping[str, Any]], reasons: Iterable[str]) -> dict[str, dict[str, int]]:
    """Questions per reason: `left_out` of retrieval scoring and scored on `partial` gold, for every reason in
    `reasons` (the ones the benchmark can give) and any other a question carries."""
    issues = [issue_of(q) for q in questions]
    names = list(dict.fromkeys([*reasons, *(i for i in issues if i)]))
    count = {name: issues.count(name) for name in names}
    return {"left_out": {n: count[n] for n in names if n not in PARTIAL},
            "partial": {n: count[n] for n in names if n in PARTIAL}}


def relevant_items(qrels: pd.DataFrame) -> dict[tuple[str, str], set[str]]:
    """(question id, granularity) -> its relevant item ids (relevance > 0): the gold the explorer marks and answer
    mode looks for in a run's top k."""
    rel = qrels[qrels.relevance > 0]
    return {(q, g): set(rows.item_id) for (q, g), rows in rel.groupby(["question_id", "granularity"])}
