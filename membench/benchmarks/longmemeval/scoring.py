"""LongMemEval: the upstream retrieval protocol (session, turn and turn->session levels) in parity.

Corpus ids are rebuilt the upstream way (evidence sessions keep `answer_…`, their non-evidence turns
become `noans_…`; a session listed twice in a haystack is two corpus entries under one id), rankings are
mapped onto them, and questions upstream leaves out of its averages
(abstention, no user-side evidence) carry a `skip` reason.
"""

from __future__ import annotations

import pandas as pd

from membench.benchmarks.longmemeval.parse import listed_id
from membench.benchmarks.longmemeval import metrics as lme
from membench.scoring.tables import Gold, frame, ranked_lists, rows_for


def corpus_for(question_id: str, gold: Gold, evidence_turns: set[str]) -> lme.UpstreamIds:
    """The question's two upstream corpora, in haystack order."""
    rows = ((session_id, turn_index, role, item_id in evidence_turns)
            for key in gold.haystack_sessions.get(question_id, [])
            for session_id, turn_index, role, item_id in gold.turn_rows[key])
    return lme.upstream_corpus_ids(rows, upstream_name=listed_id)


def score(run: pd.DataFrame, gold: Gold) -> pd.DataFrame:
    sessions = ranked_lists(run, "session")
    turns = ranked_lists(run, "turn")
    evidence = gold.qrels_by_question("turn")
    rows = []
    for q in gold.questions.to_dict("records"):
        qid = q["question_id"]
        hits = set(evidence.get(qid, {}))
        ids = corpus_for(qid, gold, hits)
        turn_of = {f"{sid}_{index + 1}": cid for (sid, index), cid in ids.turn_of.items()}
        kwargs = {}
        if qid in sessions:
            kwargs.update(session_ranked=[ids.session_of[s] for s in sessions[qid]], session_corpus_ids=ids.session_ids)
        if qid in turns:
            kwargs.update(turn_ranked=[turn_of[t] for t in turns[qid]], turn_corpus_ids=ids.turn_ids)
        rows += rows_for(q, lme.question_rows(**kwargs), lme.skip_reason(qid, bool(hits)))
    return frame(rows)
