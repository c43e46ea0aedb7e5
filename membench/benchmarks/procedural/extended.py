"""Procedural scores over the extended pool: official labels + the LLM judge's grades of unlabelled pairs.

Pool rule: an official label always wins (a judgment of a labelled pair is ignored -- official labels are
never overwritten). An ``ok`` judgment of an unlabelled pair adds the pair to the qrels: relevant when the
grade is >= 6 with gain = the grade (the official labels' convention), and *judged non-relevant* (gain 0)
below 6. Failed or missing judgments leave the pair unjudged. Everything else is the official measure
(:func:`membench.benchmarks.procedural.metrics.measures`: trec P/R/F1/nDCG@k, AP, RR, judged@k over the full pool),
reported under ``extended/`` names next to the official ones, so the report can show both, and judged@k
before (official) and after (extended).

Judgments may come from several adapters' judge runs (a shared pool, as in TREC pooling) or from the
scored adapter alone; pass what the report should state. Duplicate pairs keep the first ``ok`` grade.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from membench.benchmarks.procedural import metrics as procedural
from membench.scoring.tables import Gold, frame, ranked_lists, rows_for

__all__ = ["PREFIX", "extended_labels", "score"]

PREFIX = "extended/"


def extended_labels(official: dict[str, dict[str, float]],
                    judgments: pd.DataFrame | None) -> dict[str, dict[str, float]]:
    """question_id -> {item: gain}: the official labels plus ok judgments of unlabelled pairs."""
    pool = {qid: dict(labels) for qid, labels in official.items()}
    if judgments is None or judgments.empty:
        return pool
    ok = judgments[(judgments.status == "ok") & judgments.score.notna()]
    for qid, item, grade in zip(ok.question_id, ok.item_id, ok.score):
        labels = pool.setdefault(str(qid), {})
        if item in labels:
            continue  # an official label (or an earlier ok judgment) wins
        grade = float(grade)
        labels[str(item)] = grade if grade >= procedural.REL_THRESHOLD else 0.0
    return pool


def score(run: pd.DataFrame, gold: Gold, judgments: pd.DataFrame | None,
          ks: Sequence[int] = procedural.KS) -> pd.DataFrame:
    """Per-question rows of ``extended/<measure>`` over official labels ∪ ok judgments."""
    ranked = ranked_lists(run, "trajectory")
    pool = extended_labels(gold.qrels_by_question("trajectory"), judgments)
    rows = []
    for q in gold.questions.to_dict("records"):
        metrics = procedural.measures(ranked.get(q["question_id"], []), pool.get(q["question_id"], {}), ks)
        rows += rows_for(q, {PREFIX + m: v for m, v in metrics.items()}, None)
    return frame(rows)
