"""What retrieval buys, on real LoCoMo questions and a loopback server that answers with the context it was shown and
judges an answer correct when it holds every gold turn of the question (a perfect reader): accuracy with the evidence
in the top k and without, the no-memory and oracle baselines, and the paired tests of a run against each, in
summary.json's shape and the report's."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from membench.analysis.aggregate import aggregate
from membench.benchmarks.registry import benchmark
from membench.qa.baselines import NO_MEMORY, ORACLE, QA_BASELINES
from membench.qa.evidence import evidence_share
from membench.report.answers import answers_json, answers_section
from membench.scoring.qa import ACCURACY_EVIDENCE_IN, ACCURACY_EVIDENCE_MISSED, EVIDENCE_IN
from membench.stages import qa
from openai_server import FakeOpenAIServer, _norm, default_responder, prompt_input, prompt_task, verdict_fields

N, K = 12, 8


def perfect_reader(gold_texts: dict[str, list[str]]):
    """Answers with the context shown, on one line; a verdict is correct when the answer holds every gold turn
    text of its question (found by the question's words, `gold_texts`: normalised question -> gold turn texts)."""
    def respond(body: dict) -> str:
        if prompt_task(body) == "answer":
            return " ".join(prompt_input(body).split("\n\nCurrent date:")[0].split())
        if prompt_task(body) == "verdict":
            fields = verdict_fields(prompt_input(body))
            texts = next(t for q, t in gold_texts.items() if q in _norm(fields["QUESTION"]))
            return json.dumps({"correct": all(_norm(t) in _norm(fields["ANSWER"]) for t in texts)})
        return default_responder(body)
    return respond


def config(server) -> dict:
    return {"llm": {"model": "fake-model", "base_url": server.url, "concurrency": 4, "backoff": 0.01,
                    "budget_usd": None}, "qa": {"k": K}}


@pytest.fixture(scope="module")
def case(ingested, tmp_path_factory):
    """12 conv-26 questions with gold turns (no category 5: a rule judges those); a hand-made run whose top k holds
    every gold turn of the even ones and none of the odd ones; the run, no-memory and oracle answered and judged."""
    folder = ingested["locomo"]
    questions = pd.read_parquet(folder / "questions.parquet")
    turns = pd.read_parquet(folder / "turns.parquet")
    qrels = pd.read_parquet(folder / "qrels.parquet")
    gold = qrels[(qrels.granularity == "turn") & (qrels.relevance > 0)].groupby("question_id").item_id.agg(list)
    conv = questions[(questions.haystack_id == "conv-26") & (questions.category != 5)
                     & questions.question_id.isin(gold.index)].head(N)
    items = turns[(turns.conversation_id == "conv-26") & (turns.kind == "turn")].item_id.tolist()
    rows = []
    for i, qid in enumerate(conv.question_id):
        wanted = list(gold[qid]) if i % 2 == 0 else []
        top = (wanted + [t for t in items if t not in set(gold[qid])])[:K]
        rows += [{"question_id": qid, "granularity": "turn", "item_id": t, "rank": r, "score": float(K - r)}
                 for r, t in enumerate(top, 1)]
    work = tmp_path_factory.mktemp("baselines")
    pd.DataFrame(rows).to_parquet(work / "hand.parquet")
    text = turns[turns.conversation_id == "conv-26"].set_index("item_id").text
    reader = perfect_reader({_norm(q.question): [str(text[t]) for t in gold[q.question_id]]
                             for q in conv.itertuples()})
    out = {}
    with FakeOpenAIServer(reader) as server:
        cfg = config(server)
        cfg["qa"]["question_ids"] = conv.question_id.tolist()
        for name, run_path in (("hand", work / "hand.parquet"), (NO_MEMORY, None), (ORACLE, None)):
            out[name] = qa.run(benchmark("locomo"), folder, run_path, work / f"{name}.parquet",
                               work / f"{name}.scores.parquet", cfg, work / "calls.jsonl", None, dataset="locomo",
                               adapter=name, progress=False, baseline=None if run_path else name)
    return {"questions": conv.set_index("question_id"), "gold": gold, "turns": turns, "out": out, "work": work}


def test_evidence_share_by_hand():
    assert evidence_share(["D1:1", "D1:2"], {"D1:2", "D3:4"}) == 0.5
    assert evidence_share(["D1:2", "D3:4", "D9:9"], {"D1:2", "D3:4"}) == 1.0
    assert pd.isna(evidence_share(["D1:1"], set()))


def test_the_run_is_split_by_whether_its_top_k_holds_the_evidence(case):
    run = case["out"]["hand"].set_index("question_id")
    even = list(case["questions"].index[0::2])
    assert run.evidence_in_top_k.to_dict() == {q: (1.0 if q in even else 0.0) for q in run.index}
    assert (run.status == "ok").all() and (run.n_context == K).all()
    scores = pd.read_parquet(case["work"] / "hand.scores.parquet")
    by = scores.groupby("metric").value
    correct = run.correct.astype(float)
    assert by.count()[EVIDENCE_IN] == N and by.mean()[EVIDENCE_IN] == 0.5
    assert by.count()[ACCURACY_EVIDENCE_IN] == by.count()[ACCURACY_EVIDENCE_MISSED] == N // 2
    assert by.mean()[ACCURACY_EVIDENCE_IN] == correct[even].mean()
    assert by.mean()[ACCURACY_EVIDENCE_MISSED] == correct.drop(even).mean()
    # a perfect reader: right exactly where the whole evidence was shown, 6 of the 6 found, 0 of the 6 missed
    assert correct[even].tolist() == [1.0] * 6 and correct.drop(even).tolist() == [0.0] * 6


def test_no_memory_answers_from_nothing_and_oracle_from_the_gold_sessions(case):
    none = case["out"][NO_MEMORY].set_index("question_id")
    assert (none.n_context == 0).all() and (none.answer == "(no memory excerpts were retrieved)").all()
    assert not none.correct.any() and none.evidence_in_top_k.isna().all()
    oracle = case["out"][ORACLE].set_index("question_id")
    turns = case["turns"][case["turns"].conversation_id == "conv-26"].set_index("item_id")
    for qid, row in oracle.iterrows():
        sessions = set(turns.loc[case["gold"][qid], "session_id"])
        assert row.n_context == len(sessions)
        for item in case["gold"][qid]:  # every gold turn is in the context, whole
            assert _norm(str(turns.loc[item, "text"])) in _norm(row.answer)
        shown = set(turns[turns.session_id.isin(sessions)].text.map(lambda t: _norm(str(t))))
        others = set(turns[~turns.session_id.isin(sessions)].text.map(lambda t: _norm(str(t)))) - shown
        assert not any(t and len(t) > 40 and t in _norm(row.answer) for t in others)
    scores = pd.read_parquet(case["work"] / f"{ORACLE}.scores.parquet")
    assert EVIDENCE_IN not in set(scores.metric)


def test_paired_tests_against_each_baseline_and_the_report(case):
    work = case["work"]
    files = [("locomo", name, work / f"{name}.scores.parquet") for name in ("hand", NO_MEMORY, ORACLE)]
    summary, significance = aggregate(files, "bm25", resamples=500, seed=0, references=list(QA_BASELINES))
    acc = {name: case["out"][name].correct.astype(float).mean() for name in ("hand", NO_MEMORY, ORACLE)}
    tests = significance[significance.metric == "qa/accuracy"].set_index(["adapter", "baseline", "split"])
    for ref in (NO_MEMORY, ORACLE):
        t = tests.loc[("hand", ref, "all")]
        assert t.mean_diff == pytest.approx(acc["hand"] - acc[ref]) and t.n == N
        # one run, two answer metrics (accuracy, LoCoMo's token F1): a family of two per baseline and split
        assert t.family == f"locomo/all/vs-{ref}" and t.family_size == 2 and t.p_holm >= t.p_value
        assert (t.wins, t.ties, t.losses) == ((6, 6, 0) if ref == NO_MEMORY else (0, 6, 6))
    assert ("oracle", NO_MEMORY, "all") not in tests.index  # the baselines are not tested against each other
    assert acc[NO_MEMORY] == 0.0 and acc["hand"] == 0.5 and acc[ORACLE] == 1.0

    answers = answers_json(summary, significance, "locomo")
    hand = answers["runs"]["hand"]
    assert hand["evidence_in_top_k"]["mean"] == 0.5 and hand["accuracy_evidence_in"]["n"] == 6
    assert hand["accuracy_evidence_missed"]["mean"] == 0.0
    assert hand["accuracy_evidence_in"]["mean"] == 1.0
    assert hand["vs"][NO_MEMORY]["mean_diff"] == 0.5 and hand["vs"][ORACLE]["mean_diff"] == -0.5
    assert set(answers["baselines"]) == {NO_MEMORY, ORACLE}
    text = answers_section(summary, significance, ["locomo"])
    assert "### What retrieval buys (answer mode)" in text
    row = next(line for line in text.splitlines() if line.startswith("| hand "))
    assert row.startswith("| hand | 0.5000 [0.250, 0.750] (n=12) | 0.5000 [0.250, 0.750] (n=12) "
                          "| 1.0000 [1.000, 1.000] (n=6) | 0.0000 [0.000, 0.000] (n=6) | +0.500 [+0.250, +0.750], "
                          "p(Holm) ")
    assert "| -0.500 [-0.750, -0.250], p(Holm) " in row
