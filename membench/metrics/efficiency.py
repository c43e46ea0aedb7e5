"""What a system's answers cost beside what they find: search latency, the tokens an agent reads, recall within a
budget of tokens.

- `latency_summary`: search latency percentiles in milliseconds (numpy's linear interpolation between order
  statistics), over the seconds each search (one `rank` call, one memory `search`) took.
- `tokens_at_k`: the tokens of the first k results: what an agent pays to read the top k.
- `budget_recall`: the share of a question's gold evidence found in the results an agent can read within `budget`
  tokens, taking whole results in rank order until the next one would not fit. A result covers the evidence units
  it holds (a session covers its turns), so systems that return turns, chunks or sessions meet on equal terms.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

PERCENTILES = (50, 95, 99)


def latency_summary(seconds: Sequence[float]) -> dict[str, float | int | None]:
    """{searches, p50, p95, p99, mean} in milliseconds (None with no search)."""
    if not len(seconds):
        return {"searches": 0, **{f"p{p}": None for p in PERCENTILES}, "mean": None}
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    return {"searches": int(ms.size), **{f"p{p}": round(float(np.percentile(ms, p)), 3) for p in PERCENTILES},
            "mean": round(float(ms.mean()), 3)}


def tokens_at_k(tokens: Sequence[int], k: int) -> int:
    return int(sum(tokens[:k]))


def read_within(tokens: Sequence[int], budget: int) -> int:
    """How many leading results fit in `budget` tokens, whole."""
    used = 0
    for n, cost in enumerate(tokens):
        used += cost
        if used > budget:
            return n
    return len(tokens)


def budget_recall(units: Sequence[Collection[str]], tokens: Sequence[int], gold: Collection[str],
                  budget: int) -> float:
    """Share of `gold` among the units of the results read within `budget` tokens (NaN without gold)."""
    if not gold:
        return float("nan")
    read = read_within(tokens, budget)
    covered = set().union(*units[:read]) if read else set()
    return len(set(gold) & covered) / len(set(gold))
