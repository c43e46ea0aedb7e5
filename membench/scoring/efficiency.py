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


def _haystack_items(gold: Gold, columns: tuple[list, list, list], rows_of: Mapping[str, np.ndarray],
                    haystack: str) -> dict[str, dict[str, tuple]]:
    """granularity -> item id -> (tokens, the turn ids it covers), for one haystack (`columns`: the token table's
    item ids, token counts and session ids as lists, taken once per run; `rows_of`: session key -> its rows, found
    once, so a LongMemEval-S haystack is not a scan of every turn of the dataset). Plain lists: a pandas slice and
    groupby per haystack took most of a LoCoMo-Plus score job (1.5 of its 2.2 s: 401 haystacks)."""
    found = [rows_of[k] for k in dict.fromkeys(gold.haystack_sessions.get(haystack, [])) if k in rows_of]
    rows = np.sort(np.concatenate(found)).tolist() if found else []
    item, count, session = columns
    turns = {item[r]: (count[r], frozenset((item[r],))) for r in rows}
    members: dict[str, list[int]] = {}
    for r in rows:  # in row order, as pandas' groupby(sort=False) orders the sessions and their turns
        members.setdefault(session[r], []).append(r)
    sessions = {sid: (sum(count[r] for r in rs), frozenset(item[r] for r in rs) | {sid}) for sid, rs in members.items()}
    return {"turn": turns, "session": sessions, "trajectory": sessions}


def score(run: pd.DataFrame, gold: Gold, tokens: pd.DataFrame, granularities: Sequence[str], budget: int,
          ks: Sequence[int] = TOKEN_KS) -> pd.DataFrame:
    """Efficiency rows of `run` for every question of `gold` (`tokens`: `membench.datasets.item_tokens`)."""
    prefix = len(granularities) > 1
    ranked = {g: ranked_lists(run, g) for g in granularities}
    evidence = {g: gold.qrels_by_question(g) for g in {*granularities, "turn"}}
    cache: dict[str, dict] = {}
    rows_of = tokens.groupby("session_key", sort=False).indices
    columns = (tokens.item_id.tolist(), [int(n) for n in tokens.tokens.tolist()], tokens.session_id.tolist())
    rows = []
    for q in gold.questions.to_dict("records"):
        qid = q["question_id"]
        if q["haystack_id"] not in cache:
            # questions come by haystack: one haystack's items at a time
            cache = {q["haystack_id"]: _haystack_items(gold, columns, rows_of, q["haystack_id"])}
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
