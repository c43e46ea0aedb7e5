"""Procedural Memory Benchmark metrics: full-label trec measures and the upstream runner's own formulas.

Labels come from ``query_bank.json``: trajectory id -> relevance score 6-10 (only scores >= 6 were
kept). An unlabelled trajectory is *unjudged* (the label pool was capped at <= 40 keyword-matched
candidates), hence ``judged@k``.

:func:`measures` - the numbers membench reports: :func:`membench.metrics.trec.measures` with
``rel_threshold = 6`` and graded gains = the label score, over the *full* label set.

:func:`upstream_compatible` - what the benchmark's own runner would print if its LLM judge returned the
stored labels, for comparison only. Upstream: github.com/qpiai/Proced_mem_bench,
``procedural_memory_benchmark/benchmark/benchmark_runner.py`` (``_evaluate_query``) and
``.../benchmark/metrics_calculator.py`` (``MetricsCalculator``). The runner retrieves ``max(ks)``
items and builds its judgments *only over those retrieved items* (score >= 6 -> relevant; an item
without a score gets 0). So, with ``L`` = the top ``max(ks)`` of the ranking:

- ``upstream/P@k``  = relevant in L[:k] / k
- ``upstream/R@k``  = relevant in L[:k] / relevant in L (0 when L holds none) - recall over the
  relevant *retrieved*, not over all labels
- ``upstream/F1@k`` = 2PR/(P+R), 0 when both are 0
- ``upstream/nDCG@k``: gain = ``min(3, max(0, int(score / 3.33)))`` (6 -> 1, 7/8/9 -> 2, 10 -> 3),
  DCG = sum gain / log2(rank + 1), and the *ideal is the same top-k gains re-sorted* - so it rewards
  only the order inside the top k, not finding the right items; 0 when the top k has no gain
- ``upstream/AP`` = mean over the relevant positions p_1 < p_2 < ... in L of (i / p_i): precision at
  each relevant retrieved item, divided by the number of relevant *retrieved* items (0 if none)

These numbers are labelled ``upstream/`` and must not be read as standard P/R/nDCG/MAP. The upstream
runner judged live with an LLM (scores on any retrieved item); here stored labels stand in for those
judgments, so published upstream figures are comparable in formula, not necessarily in value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from membench.metrics import trec

__all__ = ["KS", "REL_THRESHOLD", "measures", "upstream_compatible", "question_rows", "upstream_gain"]

KS: tuple[int, ...] = (1, 3, 5, 10)
REL_THRESHOLD: float = 6.0


def measures(ranked: list[str], labels: dict[str, float], ks: Sequence[int] = KS) -> dict[str, float]:
    """Full-label trec measures (P/R/F1/nDCG@k, judged@k, AP, RR), relevant = label >= 6, gain = label."""
    return trec.measures(ranked, labels, ks=ks, rel_threshold=REL_THRESHOLD)


def upstream_gain(score: float) -> int:
    """The upstream runner's nDCG gain for a 0-10 relevance score (``int`` truncates toward zero)."""
    return min(3, max(0, int(score / 3.33)))


def upstream_compatible(ranked: list[str], labels: dict[str, float], ks: Sequence[int] = KS) -> dict[str, float]:
    """The upstream runner's per-query formulas (keys ``upstream/...``); see the module docstring."""
    if not ks:
        raise ValueError("ks must not be empty")
    for k in ks:
        if int(k) != k or k < 1:
            raise ValueError(f"cut-off k must be a positive integer, got {k!r}")
    retrieved = list(ranked[: max(ks)])
    scores = {t: float(labels.get(t, 0.0)) for t in retrieved}
    judgments = {t: s >= REL_THRESHOLD for t, s in scores.items()}
    # upstream counts True values of a dict keyed by id: a repeated id counts once here ...
    total_relevant = sum(1 for rel in judgments.values() if rel)

    out: dict[str, float] = {}
    for k in ks:
        top = retrieved[:k]
        # ... but once per position here
        hits = sum(1 for t in top if judgments[t])
        p = hits / k
        r = hits / total_relevant if total_relevant > 0 else 0.0
        f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
        gains = [upstream_gain(scores[t]) for t in top]
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(gains, reverse=True)) if g > 0)
        out[f"upstream/P@{k}"] = p
        out[f"upstream/R@{k}"] = r
        out[f"upstream/F1@{k}"] = f1
        out[f"upstream/nDCG@{k}"] = dcg / idcg if idcg > 0 else 0.0

    positions = [i for i, t in enumerate(retrieved, start=1) if judgments[t]]
    out["upstream/AP"] = (
        sum(n / p for n, p in enumerate(positions, start=1)) / len(positions) if positions else 0.0
    )
    return out


def question_rows(ranked: list[str], labels: dict[str, float], ks: Sequence[int] = KS) -> dict[str, float]:
    """Both sets of numbers for one query: the trec keys plus the ``upstream/`` keys."""
    return {**measures(ranked, labels, ks), **upstream_compatible(ranked, labels, ks)}
