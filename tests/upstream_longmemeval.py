"""An independent, literal re-statement of LongMemEval's retrieval protocol (upstream `run_retrieval.py`'s corpus,
`flat-bm25` ranking and `eval_utils.py` formulas), computed straight from a benchmark record. The parity tests
compare membench's figures with it; it shares no code with membench."""

from __future__ import annotations

import math

import numpy as np
from rank_bm25 import BM25Okapi

KS = (1, 3, 5, 10, 30, 50)
MEASURES = ("recall_any", "recall_all", "ndcg_any")


def upstream_corpus(entry, granularity):
    """Corpus and ids as upstream's run_retrieval builds them (ids renamed answer->noans), one entry per listing."""
    corpus, ids = [], []
    for sid, session in zip(entry["haystack_session_ids"], entry["haystack_sessions"]):
        if granularity == "session":
            corpus.append(" ".join(t["content"] for t in session if t["role"] == "user"))
            hit = any(t.get("has_answer") for t in session if t["role"] == "user")
            ids.append(sid if hit or "answer" not in sid else sid.replace("answer", "noans"))
        else:
            for i, t in enumerate(session):
                if t["role"] != "user":
                    continue
                tid = f"{sid}_{i + 1}"
                ids.append(tid if t.get("has_answer") or "answer" not in sid else tid.replace("answer", "noans"))
                corpus.append(t["content"])
    return corpus, ids


def upstream_ranking(entry, granularity):
    """(ranked ids, corpus ids): BM25Okapi over `split(" ")`, order `argsort(scores)[::-1]`."""
    corpus, ids = upstream_corpus(entry, granularity)
    bm25 = BM25Okapi([doc.split(" ") for doc in corpus])
    order = np.argsort(bm25.get_scores(entry["question"].split(" ")))[::-1]
    return [ids[i] for i in order], ids


def dcg(gains, k):
    gains = list(gains)[:k]
    return (gains[0] + sum(g / math.log2(i) for i, g in enumerate(gains[1:], start=2))) if gains else 0.0


def upstream_eval(ranked_ids, corpus_ids, correct, k):
    top = set(ranked_ids[:k])
    gains = [1 if c in correct else 0 for c in corpus_ids]
    ideal = dcg(sorted(gains, reverse=True), k)
    actual = dcg([1 if r in correct else 0 for r in ranked_ids], k)
    return (float(any(c in top for c in correct)), float(all(c in top for c in correct)),
            actual / ideal if ideal else 0.0)


def turn2session(ranked, ids, correct, k):
    """A turn ranking scored at session level: ids stripped of their turn number, k widened to k sessions."""
    strip = lambda x: "_".join(x.split("_")[:-1])  # noqa: E731
    sessions = [strip(x) for x in ranked]
    eff = k
    while eff <= len(ids) and len(set(sessions[:eff])) < k:
        eff += 1
    return upstream_eval(sessions, [strip(x) for x in ids], {strip(c) for c in correct}, eff)


def upstream_figures(entry, ks=KS):
    """Every `<level>/<measure>@<k>` figure of bm25 on one question, as upstream computes it."""
    out = {}
    for granularity in ("session", "turn"):
        ranked, ids = upstream_ranking(entry, granularity)
        correct = {i for i in ids if "answer" in i}
        for k in ks:
            out.update({f"{granularity}/{m}@{k}": v for m, v in zip(MEASURES, upstream_eval(ranked, ids, correct, k))})
            if granularity == "turn":
                out.update({f"turn2session/{m}@{k}": v
                            for m, v in zip(MEASURES, turn2session(ranked, ids, correct, k))})
    return out
