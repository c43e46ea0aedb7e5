"""LoCoMo: evidence recall@k per QA, as the upstream scorer counts it (repeated entries count twice)."""

from __future__ import annotations

import pandas as pd

from membench.metrics import locomo
from membench.scoring.tables import Gold, frame, ranked_lists, rows_for


def score(run: pd.DataFrame, gold: Gold) -> pd.DataFrame:
    ranked = ranked_lists(run, "turn")
    evidence = gold.qrels_by_question("turn")
    rows = []
    for q in gold.questions.to_dict("records"):
        items = [item for item, weight in evidence.get(q["question_id"], {}).items() for _ in range(int(weight))]
        rows += rows_for(q, locomo.question_rows(ranked.get(q["question_id"], []), items), None)
    return frame(rows)
