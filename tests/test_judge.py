"""LLM judge on the real Procedural data, shared cache across adapters, extended-pool metrics by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from membench.runs.registry import load_adapter
from membench.benchmarks.registry import benchmark
from membench.pool.relevance_judge import grade_parser, trajectory_texts, unlabelled_pairs
from membench.llm.replies import MalformedReply
from membench.report.model_stages import judge_section
from membench.benchmarks.procedural import extended
from membench.scoring.tables import Gold
from membench.stages import judge
from membench.stages.rank import rank_dataset
from openai_server import FakeOpenAIServer, prompt_input

MODEL = "fake-model"


def config(server, k=10, **llm) -> dict:
    return {"llm": {"model": MODEL, "base_url": server.url, "concurrency": 4, "backoff": 0.01, "budget_usd": None,
                    **llm},
            "judge": {"k": k}}


@pytest.fixture(scope="module")
def runs(ingested, tmp_path_factory):
    """Two real runs on the procedural corpus: bm25 and bm25 with other parameters."""
    folder = ingested["procedural"]
    out = tmp_path_factory.mktemp("runs")
    paths = {}
    for name, params in (("bm25", {}), ("bm25-flat", {"k1": 0.6, "b": 0.2})):
        run = rank_dataset(benchmark("procedural"), folder, load_adapter("bm25", params), 10)
        paths[name] = out / f"{name}.parquet"
        run.to_parquet(paths[name])
    return paths


def independent_unlabelled(procedural_dir, run: pd.DataFrame) -> list[tuple[str, str]]:
    """(query text, trajectory) of the unlabelled top-10 pairs, from the raw query bank."""
    bank = json.loads((procedural_dir / "query_bank.json").read_text())["queries"]
    labelled = {q["query_id"]: {t["trajectory_id"] for t in q["relevant_trajectories"]} for q in bank}
    text = {q["query_id"]: q["query_text"] for q in bank}
    pairs = []
    for qid, group in run.groupby("question_id"):
        for tid in group.sort_values("rank").item_id.head(10):
            if tid not in labelled[qid]:
                pairs.append((qid, text[qid], tid))
    return pairs


def test_judge_grades_unlabelled_top10_and_shares_cache(ingested, procedural_dir, runs, tmp_path):
    folder = ingested["procedural"]
    run_a, run_b = pd.read_parquet(runs["bm25"]), pd.read_parquet(runs["bm25-flat"])
    pairs_a = independent_unlabelled(procedural_dir, run_a)
    pairs_b = independent_unlabelled(procedural_dir, run_b)
    distinct_a = {(t, i) for _, t, i in pairs_a}
    distinct_b = {(t, i) for _, t, i in pairs_b}
    assert len(pairs_a) > 100 and len(distinct_b - distinct_a) > 0 and len(distinct_a & distinct_b) > 0
    cache = tmp_path / "calls.jsonl"
    with FakeOpenAIServer() as server:
        ja = judge.run(folder, runs["bm25"], tmp_path / "ja.parquet", config(server), cache, tmp_path / "ca.json",
                       dataset="procedural", adapter="bm25", progress=False)
        # one row per unlabelled pair; one call per distinct prompt (medium_12 and hard_14 share a text)
        assert len(ja) == len(pairs_a)
        assert server.total == len(distinct_a) and server.by_task == {"grade": len(distinct_a)}
        assert set(zip(ja.question_id, ja.item_id)) == {(q, i) for q, _, i in pairs_a}
        assert (ja.status == "ok").all() and ja.score.between(0, 10).all() and (ja.model == MODEL).all()
        assert ja.score.apply(float.is_integer).all() and ja.reason.str.startswith("fake grade").all()
        # each grade is the server's for exactly that prompt: score = sha256(input) % 11
        import hashlib
        by_input = {prompt_input(b): int(hashlib.sha256(prompt_input(b).encode()).hexdigest(), 16) % 11
                    for b in server.requests}
        assert sorted(by_input.values()) == sorted(
            ja.drop_duplicates(subset=["item_id", "reason"]).score.astype(int).tolist())

        # the second adapter pays only for the pairs the first did not retrieve
        jb = judge.run(folder, runs["bm25-flat"], tmp_path / "jb.parquet", config(server), cache,
                       tmp_path / "cb.json", dataset="procedural", adapter="bm25-flat", progress=False)
        assert server.total == len(distinct_a | distinct_b)
        assert set(server.by_hash.values()) == {1}
        shared = jb.merge(ja, on=["question_id", "item_id"], suffixes=("_b", "_a"))
        assert len(shared) > 0 and (shared.score_a == shared.score_b).all()
        cost_b = json.loads((tmp_path / "cb.json").read_text())
        stage = cost_b["summary"]["stages"]["judge"]
        assert stage["calls"] == len(distinct_b - distinct_a)
        assert stage["cache_hits"] == len(pairs_b) - len(distinct_b - distinct_a)

    # official labels are never overwritten; extended/judged@10 covers every graded pair
    gold = Gold.load(folder)
    official = benchmark("procedural").score(run_a, gold)
    ext = judge.score(runs["bm25"], folder, [tmp_path / "ja.parquet"], tmp_path / "ext.parquet")
    assert pd.read_parquet(tmp_path / "ext.parquet").shape == ext.shape
    j10 = ext[ext.metric == "extended/judged@10"].value
    assert (j10 == 1.0).all()  # every top-10 pair is officially labelled or graded ok
    before = official[official.metric == "judged@10"].value.mean()
    assert before < 1.0
    assert math.isclose(before, 1 - len(pairs_a) / (10 * 40))
    assert set(official.metric).isdisjoint(set(ext.metric))
    md = judge_section({("procedural", "bm25"): (official, ext)}, {("procedural", "bm25"): ja}, resamples=200)
    assert "| bm25 | judged@10 | " in md and "1.0000" in md and "unlabelled pairs" in md


def test_unlabelled_pairs_and_trajectory_text(ingested):
    run = pd.DataFrame({"question_id": ["q"] * 4, "rank": [1, 2, 3, 4], "item_id": ["a", "b", "a", "c"],
                        "score": [4.0, 3, 2, 1], "granularity": "trajectory"})
    pairs = unlabelled_pairs(run, {"q": {"b": 7.0}}, k=3)
    assert list(zip(pairs.item_id, pairs["rank"])) == [("a", 1), ("c", 4)]  # repeat dropped; then top 3
    turns = pd.read_parquet(ingested["procedural"] / "turns.parquet")
    texts = trajectory_texts(turns, max_state_chars=40, max_steps=3)
    assert len(texts) == 336
    lines = texts["alfworld_0"].splitlines()
    assert lines[0] == "Task: find two laptop and put them in bed." and lines[1] == "Steps:"
    assert lines[2].startswith("1. State: You are in the middle of a room.") and lines[2].endswith(
        "-> Action: go to diningtable 1")
    assert "…" in lines[2] and len(lines) == 6 and lines[-1].startswith("... (")


def test_grade_parser():
    parse = grade_parser()
    assert parse('{"score": 7, "reason": "same goal"}') == (7.0, "same goal")
    assert parse('Here: ```json\n{"score": 6.0}\n```') == (6.0, "")
    for bad in ('{"score": 11, "reason": "x"}', '{"score": "7"}', '{"score": true}', '{"reason": "x"}',
                '{"score": -1}', '{"score": 5, "reason": 3}', "seven"):
        with pytest.raises(MalformedReply):
            parse(bad)


def test_extended_metrics_by_hand():
    questions = pd.DataFrame([{"question_id": "q1", "split": "tune", "question_type": "placement", "tier": "EASY",
                               "question": "put a mug in the cabinet"}])
    qrels = pd.DataFrame([{"question_id": "q1", "item_id": "A", "granularity": "trajectory", "relevance": 8.0}])
    gold = Gold(questions, pd.DataFrame(), pd.DataFrame(), qrels)
    run = pd.DataFrame({"question_id": "q1", "rank": [1, 2, 3], "item_id": ["B", "A", "C"], "score": [3.0, 2, 1],
                        "granularity": "trajectory"})
    judgments = pd.DataFrame({"question_id": "q1", "item_id": ["B", "C", "A", "D"],
                              "score": [7.0, 3.0, 2.0, np.nan], "status": ["ok", "ok", "ok", "failed"]})
    pool = extended.extended_labels(gold.qrels_by_question("trajectory"), judgments)
    assert pool == {"q1": {"A": 8.0, "B": 7.0, "C": 0.0}}  # official A kept; C judged non-relevant; D unjudged
    rows = extended.score(run, gold, judgments, ks=(1, 3))
    got = dict(zip(rows.metric, rows.value))
    dcg = 7 + 8 / math.log2(3)
    idcg = 8 + 7 / math.log2(3)
    assert got["extended/P@1"] == 1.0 and got["extended/P@3"] == pytest.approx(2 / 3)
    assert got["extended/R@1"] == 0.5 and got["extended/R@3"] == 1.0
    assert got["extended/nDCG@1"] == pytest.approx(7 / 8)
    assert got["extended/nDCG@3"] == pytest.approx(dcg / idcg)
    assert got["extended/AP"] == pytest.approx((1 / 1 + 2 / 2) / 2)
    assert got["extended/judged@1"] == 1.0 and got["extended/judged@3"] == 1.0
    # the official figures on the same run: only A is labelled
    assert gold.qrels_by_question("trajectory") == {"q1": {"A": 8.0}}
    from membench.benchmarks.procedural.metrics import measures
    off = measures(["B", "A", "C"], {"A": 8.0}, ks=(1, 3))
    assert off["judged@3"] == pytest.approx(1 / 3) and off["P@1"] == 0.0 and off["AP"] == 0.5
