"""LoCoMo: evidence recall@k per QA, as the upstream scorer counts it (repeated entries count twice).

A QA whose evidence resolves to no turn (empty, or every entry dangling) has no gold to score against, so it
is left out under its parser's reason (validity rule 6) rather than scored 1.0 as upstream's empty-evidence
rule would; a QA with some dangling entries is scored on the ones that resolve.
"""

from __future__ import annotations

import pandas as pd

from membench.benchmarks.locomo import metrics as locomo
from membench.scoring.tables import Gold, frame, gold_rows, ranked_lists


def score(run: pd.DataFrame, gold: Gold) -> pd.DataFrame:
    ranked = ranked_lists(run, "turn")
    evidence = gold.qrels_by_question("turn")
    rows = []
    for q in gold.questions.to_dict("records"):
        items = [item for item, weight in evidence.get(q["question_id"], {}).items() for _ in range(int(weight))]
        metrics = locomo.question_rows(ranked.get(q["question_id"], []), items)
        rows += gold_rows(q, metrics, bool(items))
    return frame(rows)
