"""Which metrics each benchmark's tables lead with, and how a mean with its CI is written."""

from __future__ import annotations

import math

HEADLINES = {
    "longmemeval": ["session/recall_any@5", "session/recall_all@5", "session/ndcg_any@10",
                    "turn2session/recall_all@5", "turn2session/ndcg_any@10", "turn/recall_all@10"],
    "locomo": ["evidence_recall@1", "evidence_recall@5", "evidence_recall@10", "evidence_recall@25",
               "evidence_recall@50"],
    "procedural": ["P@5", "R@10", "nDCG@5", "nDCG@10", "AP", "judged@5", "upstream/AP"],
}

# The metric family drawn as a curve over k, and the metric the group breakdown shows.
CURVES = {"longmemeval": "session/recall_any", "locomo": "evidence_recall", "procedural": "R"}
BREAKDOWN = {"longmemeval": "session/recall_all@5", "locomo": "evidence_recall@10", "procedural": "nDCG@5"}


def with_ci(mean: float, lo: float, hi: float) -> str:
    if math.isnan(mean):
        return "n/a"
    if math.isnan(lo):
        return f"{mean:.4f}"
    return f"{mean:.4f} [{lo:.3f}, {hi:.3f}]"
