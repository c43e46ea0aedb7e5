"""The QA baselines a run's answers are read against, each a run name of its own, and the context each answers from.

- `full-context`: every session of the question's haystack (the upper reference the benchmarks' papers report);
- `no-memory`: nothing but the question (what the answer model knows, or guesses, without any memory: a memory
  system that scores below it hurts);
- `oracle`: only the sessions holding the question's gold evidence (what perfect retrieval at session granularity
  would give; a question without gold gets an empty context, as under no-memory).

Each is answered and judged exactly like a run (same prompts, same judge, same cache), with sessions in date order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from membench.qa.answer import TurnIndex
from membench.qa.evidence import evidence_sessions

__all__ = ["FULL_CONTEXT", "NO_MEMORY", "ORACLE", "QA_BASELINES", "baseline_items"]

FULL_CONTEXT = "full-context"
NO_MEMORY = "no-memory"
ORACLE = "oracle"
QA_BASELINES = {FULL_CONTEXT: "full_context", NO_MEMORY: "no_memory", ORACLE: "oracle"}  # run name -> its qa key


def baseline_items(baseline: str, questions: Sequence[Mapping], index: TurnIndex, qrels: pd.DataFrame
                   ) -> dict[str, list[str]]:
    """question id -> the session ids the baseline answers it from, in haystack order."""
    if baseline == FULL_CONTEXT:
        return {q["question_id"]: index.session_ids(q["haystack_id"]) for q in questions}
    if baseline == NO_MEMORY:
        return {q["question_id"]: [] for q in questions}
    if baseline == ORACLE:
        return evidence_sessions(qrels, questions, index)
    raise ValueError(f"unknown QA baseline {baseline!r} (known: {', '.join(QA_BASELINES)})")
