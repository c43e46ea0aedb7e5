"""The QA stage's per-question score rows, in the scorer's shape (for the aggregate rule)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from membench.scoring.tables import frame, rows_for

__all__ = ["qa_rows"]


def qa_rows(qa: pd.DataFrame, questions: pd.DataFrame, judge_metrics: Mapping[str, str] | None = None,
            f1: bool = True) -> pd.DataFrame:
    """Per-question score rows (``qa/accuracy`` 1/0, ``qa/f1`` where computed, and the metrics of the benchmark's own
    judge, ``judge_metrics``: metric -> its column in ``qa``) in the scorer's shape.

    A question without a verdict (failed, budget, interrupted) gets a skip reason = its status, so it is counted as
    skipped rather than as wrong; the report states how many. Likewise a question the own judge did not score gets
    its ``judge_status`` as the reason, and a value its formula leaves undefined (NaN) the reason ``undefined``.
    A question scored by its own judge only, which gives no verdict, has no ``qa/accuracy`` row.
    ``f1``: whether the benchmark has token F1 (LoCoMo), for its questions with a category.
    """
    meta: Mapping[str, dict] = {q["question_id"]: q for q in questions.to_dict("records")}
    judge_metrics = dict(judge_metrics or {})
    rows = []
    for r in qa.to_dict("records"):
        q = meta[r["question_id"]]
        correct = r.get("correct")
        if pd.isna(correct):
            if r.get("status") != "ok":  # "ok" without a verdict: scored by its own judge only, which gives none
                rows += rows_for(q, {"qa/accuracy": float("nan")}, str(r.get("status") or "failed"))
        else:
            rows += rows_for(q, {"qa/accuracy": 1.0 if bool(correct) else 0.0}, None)
        for metric, column in judge_metrics.items():
            value = r.get(column)
            if r.get("judge_status") != "ok":
                rows += rows_for(q, {metric: float("nan")}, str(r.get("judge_status") or r.get("status") or "failed"))
            elif value is None or pd.isna(value):
                rows += rows_for(q, {metric: float("nan")}, "undefined")
            else:
                rows += rows_for(q, {metric: float(value)}, None)
        if not f1 or pd.isna(q.get("category")):
            continue  # token F1 is LoCoMo's measure only
        value = r.get("f1")
        if value is not None and not pd.isna(value):
            rows += rows_for(q, {"qa/f1": float(value)}, None)
        else:
            rows += rows_for(q, {"qa/f1": float("nan")}, str(r.get("status") or "failed"))
    return frame(rows)
