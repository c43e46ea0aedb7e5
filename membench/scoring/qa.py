"""The QA stage's per-question score rows, in the scorer's shape (for the aggregate rule).

Retrieval and answers side by side, never in one figure: for a run's question with a verdict and gold evidence,
``qa/evidence-in-top-k`` is 1 when every gold item is in the run's top k (a retrieval figure, over the same
questions as the accuracy it sits beside), and the verdict is repeated as ``qa/accuracy-evidence-in`` or
``qa/accuracy-evidence-missed`` by that condition, so each gets its own mean, CI and n in the aggregate.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from membench.scoring.tables import frame, rows_for

__all__ = ["qa_rows", "EVIDENCE_IN", "ACCURACY_EVIDENCE_IN", "ACCURACY_EVIDENCE_MISSED", "BY_EVIDENCE"]

EVIDENCE_IN = "qa/evidence-in-top-k"
ACCURACY_EVIDENCE_IN = "qa/accuracy-evidence-in"
ACCURACY_EVIDENCE_MISSED = "qa/accuracy-evidence-missed"
BY_EVIDENCE = (EVIDENCE_IN, ACCURACY_EVIDENCE_IN, ACCURACY_EVIDENCE_MISSED)


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
            rows += _by_evidence(q, bool(correct), r.get("evidence_in_top_k"))
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


def _by_evidence(question: dict, correct: bool, share) -> list[dict]:
    """The evidence figure and the verdict under its condition, for a question whose share is known."""
    if share is None or pd.isna(share):
        return []
    found = float(share) >= 1.0
    condition = ACCURACY_EVIDENCE_IN if found else ACCURACY_EVIDENCE_MISSED
    return rows_for(question, {EVIDENCE_IN: 1.0 if found else 0.0, condition: 1.0 if correct else 0.0}, None)
