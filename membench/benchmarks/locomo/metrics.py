"""LoCoMo evidence recall, as the upstream QA scorer computes it.

Upstream: github.com/snap-research/locomo, ``task_eval/evaluation.py`` (``eval_question_answering``):
for a QA with a non-empty ``evidence`` list, recall = (number of entries of ``evidence`` that are in the
retrieved context) / ``len(evidence)``; a QA with empty evidence scores 1. The count runs over the list
as stored, so a dia_id listed twice counts twice in numerator and denominator (locomo10 has one such
QA in conv-50: ``["D4:5", "D4:5", "D5:5"]``). Evidence strings are compared as they are; repairing
LoCoMo's malformed evidence strings is the parser's job, not this function's.

(Upstream also has a session-level variant for contexts named ``S<n>``, which compares the session
number of each dia_id; membench ranks turns, so it is not reproduced here.)
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["KS", "evidence_recall", "question_rows", "metric_names"]

KS: tuple[int, ...] = (1, 5, 10, 25, 50)


def evidence_recall(ranked: list[str], evidence: list[str], k: int) -> float:
    """Share of the evidence dia_ids (list entries, repeats included) found in the top k; 1.0 if none."""
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if not evidence:
        return 1.0
    top = set(ranked[:k])
    return sum(1 for ev in evidence if ev in top) / len(evidence)


def metric_names(ks: Sequence[int] = KS) -> list[str]:
    return [f"evidence_recall@{k}" for k in ks]


def question_rows(ranked: list[str], evidence: list[str], ks: Sequence[int] = KS) -> dict[str, float]:
    """``evidence_recall@k`` for every k."""
    return {f"evidence_recall@{k}": evidence_recall(ranked, evidence, k) for k in ks}
