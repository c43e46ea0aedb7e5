"""LoCoMo-Plus: LoCoMo's evidence recall@k (`membench.benchmarks.locomo.metrics`, k in 1, 5, 10, 25, 50) over the
turns of the item's cue dialogue: the share of them in the top k. Upstream scores answers only (an LLM judge), so
this is LoCoMo's own retrieval measure applied to the evidence LoCoMo-Plus names. Every item has a cue dialogue of
one or two turns, so no question is left out for want of gold."""

from __future__ import annotations

import pandas as pd

from membench.benchmarks.locomo import metrics
from membench.scoring.tables import Gold, frame, gold_rows, ranked_lists


def score(run: pd.DataFrame, gold: Gold) -> pd.DataFrame:
    ranked = ranked_lists(run, "turn")
    cues = gold.qrels_by_question("turn")
    rows = []
    for q in gold.questions.to_dict("records"):
        cue = list(cues.get(q["question_id"], {}))
        rows += gold_rows(q, metrics.question_rows(ranked.get(q["question_id"], []), cue), bool(cue))
    return frame(rows)
