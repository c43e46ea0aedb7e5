"""The QA stage's per-question score rows, in the scorer's shape (for the aggregate rule)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from membench.scoring.tables import frame, rows_for

__all__ = ["qa_rows"]


def qa_rows(qa: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """Per-question score rows (``qa/accuracy`` 1/0, ``qa/f1`` where computed) in the scorer's shape.

    A question without a verdict (failed, budget, interrupted) gets a skip reason = its status, so it is
    counted as skipped rather than as wrong; the report states how many.
    """
    meta: Mapping[str, dict] = {q["question_id"]: q for q in questions.to_dict("records")}
    rows = []
    for r in qa.to_dict("records"):
        q = meta[r["question_id"]]
        correct = r.get("correct")
        if pd.isna(correct):
            rows += rows_for(q, {"qa/accuracy": float("nan")}, str(r.get("status") or "failed"))
        else:
            rows += rows_for(q, {"qa/accuracy": 1.0 if bool(correct) else 0.0}, None)
        if pd.isna(q.get("category")):
            continue  # token F1 is LoCoMo's measure only
        f1 = r.get("f1")
        if f1 is not None and not pd.isna(f1):
            rows += rows_for(q, {"qa/f1": float(f1)}, None)
        else:
            rows += rows_for(q, {"qa/f1": float("nan")}, str(r.get("status") or "failed"))
    return frame(rows)
