"""Procedural: P/R/F1/nDCG@k, AP and judged@k over the full graded labels, plus the upstream runner's
retrieved-list formulas under `upstream/` (reproduced for comparison, labelled as such)."""

from __future__ import annotations

import pandas as pd

from membench.metrics import procedural
from membench.scoring.tables import Gold, frame, ranked_lists, rows_for


def score(run: pd.DataFrame, gold: Gold) -> pd.DataFrame:
    ranked = ranked_lists(run, "trajectory")
    labels = gold.qrels_by_question("trajectory")
    rows = []
    for q in gold.questions.to_dict("records"):
        metrics = procedural.question_rows(ranked.get(q["question_id"], []), labels.get(q["question_id"], {}))
        rows += rows_for(q, metrics, None)
    return frame(rows)
