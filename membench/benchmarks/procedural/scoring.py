"""Procedural: P/R/F1/nDCG@k, AP and judged@k over the full graded labels, plus the upstream runner's
retrieved-list formulas under `upstream/` (reproduced for comparison, labelled as such).

A query without a relevant label (none at all, or all below 6) has no gold to score against: it is left out
under its parser's reason (validity rule 6), not scored 0 by the `upstream/` formulas."""

from __future__ import annotations

import pandas as pd

from membench.benchmarks.procedural import metrics as procedural
from membench.scoring.tables import Gold, frame, gold_rows, ranked_lists


def score(run: pd.DataFrame, gold: Gold) -> pd.DataFrame:
    ranked = ranked_lists(run, "trajectory")
    labels = gold.qrels_by_question("trajectory")
    rows = []
    for q in gold.questions.to_dict("records"):
        own = labels.get(q["question_id"], {})
        metrics = procedural.question_rows(ranked.get(q["question_id"], []), own)
        rows += gold_rows(q, metrics, any(s >= procedural.REL_THRESHOLD for s in own.values()))
    return frame(rows)
