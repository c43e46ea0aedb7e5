"""LongMemEval's own retrieval log (JSON lines), so the benchmark's printing script reads membench runs.

One line per question: its fields plus `retrieval_results = {query, ranked_items: [{corpus_id, text,
timestamp}], metrics: {session: {...}, turn: {...}}}`, ids in upstream form. As upstream does, a turn run
stores its turn->session figures under `metrics.session`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from membench.benchmarks.longmemeval.dates import upstream_date
from membench.io import atomic_path
from membench.benchmarks.longmemeval.scoring import corpus_for
from membench.scoring.tables import Gold, ranked_lists

LOG_LEVELS = {"session": {"session": "session/"}, "turn": {"session": "turn2session/", "turn": "turn/"}}


def write_log(run: pd.DataFrame, gold: Gold, scores: pd.DataFrame, granularity: str, out: Path) -> int:
    ranked = ranked_lists(run, granularity)
    evidence = gold.qrels_by_question("turn")
    by_q = {qid: dict(zip(g.metric, g.value)) for qid, g in scores.groupby("question_id")}
    turn_text = {(r.session_id, r.turn_index): r for r in gold.turns.itertuples(index=False)}
    sessions = _session_docs(gold.turns) if granularity == "session" else {}  # turn logs never need them
    written = 0
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for q in gold.questions.to_dict("records"):
            qid = q["question_id"]
            if qid not in ranked:
                continue
            ids = corpus_for(qid, gold, set(evidence.get(qid, {})))
            items = [_item(item, granularity, ids, turn_text, sessions) for item in ranked[qid]]
            metrics = {level: {m[len(prefix):]: v for m, v in by_q.get(qid, {}).items() if m.startswith(prefix)}
                       for level, prefix in LOG_LEVELS[granularity].items()}
            entry = {"question_id": qid, "question_type": q["question_type"], "question": q["question"],
                     "answer": q["answer"], "question_date": upstream_date(q["question_date"]),
                     "retrieval_results": {"query": q["question"], "ranked_items": items, "metrics": metrics}}
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
            written += 1
    return written


def _session_docs(turns: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """session_id -> (user turns joined by a space, session date), the upstream session document: of a session
    listed more than once, its first listing. One pass over plain columns (a pandas group per session cost
    seconds per log at S-100)."""
    ordered = turns.sort_values(["session_key", "turn_index"])
    first_key: dict[str, str] = {}
    dates: dict[str, str] = {}
    user_texts: dict[str, list[str]] = {}
    for sid, key, role, text, date in zip(ordered.session_id, ordered.session_key, ordered.role, ordered.text,
                                          ordered.session_date):
        if first_key.setdefault(sid, key) != key:
            continue
        dates.setdefault(sid, date)
        if role == "user":
            user_texts.setdefault(sid, []).append(text)
    return {sid: (" ".join(user_texts.get(sid, [])), date) for sid, date in dates.items()}


def _item(item: str, granularity: str, ids, turn_text, sessions) -> dict:
    if granularity == "session":
        text, date = sessions[item]
        return {"corpus_id": ids.session_of[item], "text": text, "timestamp": upstream_date(date)}
    session_id, _, n = item.rpartition("_")
    row = turn_text[(session_id, int(n) - 1)]
    return {"corpus_id": ids.turn_of[(session_id, int(n) - 1)], "text": row.text,
            "timestamp": upstream_date(row.session_date)}
