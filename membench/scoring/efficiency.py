"""Efficiency rows of one run, in the score rows' shape: the tokens of its top k and its recall within the
benchmark's token budget (`membench.metrics.efficiency`), per question and granularity.

A question's items are looked up in its own haystack (item ids repeat across LoCoMo's conversations). Gold for the
budget recall is the question's turn-level evidence where it has some (LoCoMo, LongMemEval), else its gold at the
run's granularity (Procedural's trajectories); a session result covers the turns it holds. Metric names:
`tokens@k` and `budget_recall@<T>tok`, with a `<granularity>/` prefix on a benchmark ranked at several.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from membench.metrics.efficiency import budget_recall, tokens_at_k
from membench.scoring.tables import Gold, frame, gold_rows, ranked_lists

TOKEN_KS = (1, 5, 10)


def _haystack_items(gold: Gold, tokens: pd.DataFrame, rows_of: Mapping[str, np.ndarray],
                    haystack: str) -> dict[str, dict[str, tuple]]:
    """granularity -> item id -> (tokens, the turn ids it covers), for one haystack (`rows_of`: session key -> its
    rows in `tokens`, found once, so a LongMemEval-S haystack is not a scan of every turn of the dataset)."""
    found = [rows_of[k] for k in dict.fromkeys(gold.haystack_sessions.get(haystack, [])) if k in rows_of]
    part = tokens.iloc[np.sort(np.concatenate(found))] if found else tokens.iloc[:0]
    turns = {i: (int(n), frozenset((i,))) for i, n in zip(part.item_id, part.tokens)}
    sessions: dict[str, tuple] = {}
    for sid, group in part.groupby("session_id", sort=False):
        sessions[sid] = (int(group.tokens.sum()), frozenset(group.item_id) | {sid})
    return {"turn": turns, "session": sessions, "trajectory": sessions}


def score(run: pd.DataFrame, gold: Gold, tokens: pd.DataFrame, granularities: Sequence[str], budget: int,
          ks: Sequence[int] = TOKEN_KS) -> pd.DataFrame:
    """Efficiency rows of `run` for every question of `gold` (`tokens`: `membench.datasets.item_tokens`)."""
    prefix = len(granularities) > 1
    ranked = {g: ranked_lists(run, g) for g in granularities}
    evidence = {g: gold.qrels_by_question(g) for g in {*granularities, "turn"}}
    cache: dict[str, dict] = {}
    rows_of = tokens.groupby("session_key", sort=False).indices
    rows = []
    for q in gold.questions.to_dict("records"):
        qid = q["question_id"]
        if q["haystack_id"] not in cache:
            cache = {q["haystack_id"]: _haystack_items(gold, tokens, rows_of, q["haystack_id"])}  # questions come by haystack
        items = cache[q["haystack_id"]]
        for g in granularities:
            found = [items[g][i] for i in ranked[g].get(qid, [])]
            costs, units = [c for c, _ in found], [u for _, u in found]
            target = set(evidence["turn"].get(qid) or evidence[g].get(qid) or ())
            name = f"{g}/" if prefix else ""
            metrics = {f"{name}tokens@{k}": float(tokens_at_k(costs, k)) for k in ks}
            metrics[f"{name}budget_recall@{budget}tok"] = budget_recall(units, costs, target, budget)
            rows += gold_rows(q, metrics, bool(target))
    return frame(rows)
