"""The pinned bm25 headline figures, recomputed independently: straight from the benchmark files, with
rank_bm25 and each benchmark's own metric definition written out here, no membench code involved."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from membench.analysis.stats import bootstrap_ci
from test_workflow import PINNED


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def bm25_order(docs: list[str] | BM25Okapi, query: str, k: int) -> list[int]:
    """Top k document positions for `query` over `docs` (or an index already built over them)."""
    index = docs if isinstance(docs, BM25Okapi) else BM25Okapi([words(d) for d in docs])
    scores = index.get_scores(words(query))
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]  # ties: earlier first


def locomo_bm25_recalls(locomo_dir, upstream_units: bool = True) -> tuple[list[float], list[str]]:
    """Per question with evidence: the share of its evidence entries in bm25's top 10, as upstream scores it,
    and its conversation; a question whose evidence resolves to no turn is left out (validity rule 6), where
    upstream would count it as 1. membench's documented repairs applied by hand (split packed ids, fix
    `D:11:26`/`D30:05`, drop ids naming no turn). Upstream units (snap-research/locomo task_eval/dpr_qa.py):
    `(<session date_time>) <speaker> said, "<text>"` and `[shares <blip_caption>]`, joined by a space."""
    data = json.loads((locomo_dir / "locomo10.json").read_text(encoding="utf-8"))
    recalls, conversations = [], []
    for conv in data:
        c = conv["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
        turns = [(c[f"session_{n}_date_time"], t) for n in numbers for t in c[f"session_{n}"]]
        if upstream_units:
            docs = [f'({date}) {t["speaker"]} said, "{t["text"]}"' + (f" [shares {t['blip_caption']}]"
                                                                      if t.get("blip_caption") else "")
                    for date, t in turns]
        else:
            docs = [t["text"] + (f" [shares image: {t['blip_caption']}]" if t.get("blip_caption") else "")
                    for _, t in turns]
        ids = [t["dia_id"] for _, t in turns]
        index = BM25Okapi([words(d) for d in docs])  # one index per conversation, as every question shares it
        for qa in conv["qa"]:
            evidence = []
            for raw in qa["evidence"]:
                for part in ([raw] if raw in ids else re.split(r"[;,\s]+", raw)):
                    m = re.fullmatch(r"D:?(\d+):0*(\d+)", part)
                    fixed = part if part in ids else (f"D{m.group(1)}:{m.group(2)}" if m else None)
                    if fixed in ids:
                        evidence.append(fixed)
            if not evidence:
                continue
            top = {ids[i] for i in bm25_order(index, qa["question"], 10)}
            recalls.append(sum(e in top for e in evidence) / len(evidence))
            conversations.append(conv["sample_id"])
    assert len(recalls) == 1986 - 4  # the 4 QA with empty evidence
    return recalls, conversations


def test_locomo_bm25_evidence_recall_at_10(locomo_dir):
    recalls, _ = locomo_bm25_recalls(locomo_dir)
    assert round(float(np.mean(recalls)), 4) == PINNED[("locomo", "bm25", "evidence_recall@10")]
    plain, _ = locomo_bm25_recalls(locomo_dir, upstream_units=False)
    assert round(float(np.mean(plain)), 4) == 0.5119  # `units: plain`, the figure before upstream units


def test_locomo_conversation_vs_question_bootstrap(locomo_dir):
    """10 conversations hold the 1,982 questions scored. bm25's conversation means lie close together (.52-.59), so drawing
    conversations alone would give a CI narrower than the question bootstrap; the two-stage bootstrap (draw
    conversations, then questions within each) keeps the within-conversation spread and is wider."""
    recalls, conversations = locomo_bm25_recalls(locomo_dir)
    _, q_lo, q_hi = bootstrap_ci(recalls, seed=0)
    _, c_lo, c_hi = bootstrap_ci(recalls, seed=0, clusters=conversations)
    assert (round(q_lo, 3), round(q_hi, 3)) == (0.537, 0.579)
    assert (round(c_lo, 3), round(c_hi, 3)) == (0.531, 0.583)
    assert c_hi - c_lo > q_hi - q_lo


def procedural_corpus(procedural_dir):
    """The trajectories, their bm25 texts (task + "State: s -> Action: a" steps) and the query bank."""
    corpus = json.loads((procedural_dir / "agentinstruct_trajectories.json").read_text(encoding="utf-8"))
    bank = json.loads((procedural_dir / "query_bank.json").read_text(encoding="utf-8"))
    trajs = corpus["trajectories"]
    docs = [" ".join([t["task_description"]] + [f"State: {p['state']} -> Action: {p['action']}"
                                                   for p in t["state_action_pairs"]]) for t in trajs]
    return trajs, docs, bank


def test_procedural_bm25_ndcg_at_5(procedural_dir):
    """Procedural: trec-style nDCG@5 with graded gains over the full label set (log2(rank + 1) discount)."""
    trajs, docs, bank = procedural_corpus(procedural_dir)
    values = []
    for q in bank["queries"]:
        gains = {r["trajectory_id"]: r["relevance_score"] for r in q["relevant_trajectories"]}
        top = [trajs[i]["task_instance_id"] for i in bm25_order(docs, q["query_text"], 5)]
        dcg = sum(gains.get(t, 0.0) / math.log2(r + 1) for r, t in enumerate(top, 1))
        ideal = sum(g / math.log2(r + 1) for r, g in enumerate(sorted(gains.values(), reverse=True)[:5], 1))
        values.append(dcg / ideal)
    assert round(float(np.mean(values)), 4) == PINNED[("procedural", "bm25", "nDCG@5")]
    assert PINNED[("procedural", "bm25", "nDCG@5")] == pytest.approx(0.5564)


def test_procedural_bm25_full_label_ap(procedural_dir):
    """Procedural: trec AP (relevant = label >= 6) over the full ranking of all 336 trajectories, so every
    label counts (Procedural is ranked in full)."""
    trajs, docs, bank = procedural_corpus(procedural_dir)
    values = []
    for q in bank["queries"]:
        relevant = {r["trajectory_id"] for r in q["relevant_trajectories"] if r["relevance_score"] >= 6}
        ranked = [trajs[i]["task_instance_id"] for i in bm25_order(docs, q["query_text"], len(docs))]
        hits = [r for r, t in enumerate(ranked, 1) if t in relevant]
        values.append(sum(n / r for n, r in enumerate(hits, 1)) / len(relevant))
    assert round(float(np.mean(values)), 4) == PINNED[("procedural", "bm25", "AP")]
