"""LoCoMo-Plus in QA mode against the loopback test server: its first 12 questions answered and judged by upstream's
Cognitive judge (evaluation_framework/task_eval/ of xjtuleeyf/Locomo-Plus at 059f4e3), with recorded replies in the
shapes upstream's parser meets (tests/fixtures/locomo-plus-judge-replies.json). The request and the scores are
checked against an independent restatement of upstream's judge below, which shares no code with membench."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import shared_path
from membench.scoring.qa import BY_EVIDENCE
from membench.benchmarks.registry import benchmark, parse_dataset
from membench.stages import qa
from openai_server import FakeOpenAIServer, default_responder, prompt_task

pytestmark = pytest.mark.data

HERE = Path(__file__).parent
RECORDED = json.loads((HERE / "fixtures" / "locomo-plus-judge-replies.json").read_text(encoding="utf-8"))
N = len(RECORDED["replies"])
# sha256 of upstream's texts at 059f4e3: PROMPT_TEMPLATES["Cognitive"] (task_eval/prompt.py) and CONV_START_PROMPT
# (task_eval/utils.py), as the Python strings they are
UPSTREAM_SHA256 = {"cognitive": "83875348ab831a4f2932457bc951d37654db9f77ecaf50e7a8aacf5ff566a08b",
                   "preamble": "bfb101603e38a36cfecfb7e989ae51d537907ad7ac0b89020e2b7c01046d3cb7"}


def sections(path: Path) -> dict[str, str]:
    parts = re.split(r"^=== (\w+) ===\n", path.read_text(encoding="utf-8"), flags=re.M)
    return {parts[i]: parts[i + 1][:-1] for i in range(1, len(parts), 2)}


PROMPTS = sections(HERE.parent / "membench" / "benchmarks" / "locomo_plus" / "judge-prompt.txt")


# --------------------------------------------------------------------------- upstream, restated


def upstream_judge_content(evidence, pred):
    """get_judge_prompt("Cognitive", ...) as call_llm sends it (no category: the preamble with A and B)."""
    prompt = PROMPTS["cognitive"].format(gold="", pred=pred or "", evidence=evidence or "")
    return PROMPTS["preamble"].format("A", "B") + prompt.strip()


def upstream_parse_judge_response(raw):
    label, reason = "", ""
    raw = (raw or "").strip()
    try:
        m = re.search(r'\{[^{}]*"label"\s*:\s*["\']([^"\']+)["\'][^{}]*"reason"\s*:\s*["\']([^"\']*)["\']', raw,
                      re.DOTALL)
        if m:
            label, reason = m.group(1).strip(), (m.group(2) or "").strip()
        else:
            obj = json.loads(raw)
            label = (obj.get("label") or "").strip()
            reason = (obj.get("reason") or "").strip()
    except Exception:
        if "correct" in raw.lower():
            label = "correct"
        elif "wrong" in raw.lower():
            label = "wrong"
        elif "partial" in raw.lower():
            label = "partial"
        reason = raw[:200] if raw else ""
    return label, reason


def upstream_label_to_score(label):
    return {"correct": 1.0, "partial": 0.5, "wrong": 0.0}.get((label or "").strip().lower(), 0.0)


def upstream_evidence(cue_dialogue, speaker_a, speaker_b):
    """_cue_dialogue_to_evidence: parse_ab_dialogue, map_speaker, then `speaker：text` lines."""
    turns = []
    for line in cue_dialogue.split("\n"):
        line = line.strip()
        if line.startswith("A:"):
            turns.append({"speaker": speaker_a, "text": line[2:].strip()})
        elif line.startswith("B:"):
            turns.append({"speaker": speaker_b, "text": line[2:].strip()})
    return "\n".join(f'{t["speaker"]}：{t["text"].strip()}' for t in turns if t.get("text"))


# --------------------------------------------------------------------------- the run


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    shared_path("locomo-plus", "locomo_plus.json")
    shared_path("locomo", "locomo10.json")
    root = shared_path()
    out_dir = tmp_path_factory.mktemp("locomo-plus-qa")
    tables = out_dir / "tables"
    parse_dataset("locomo-plus", root).write(tables, {})
    questions = pd.read_parquet(tables / "questions.parquet").sort_values("index").head(N)
    items = json.loads((root / "locomo-plus" / "locomo_plus.json").read_text(encoding="utf-8"))
    conversations = {c["sample_id"]: c["conversation"] for c in
                     json.loads((root / "locomo" / "locomo10.json").read_text(encoding="utf-8"))}
    evidence = {}  # the evidence upstream would show for each question, from the raw files and the placement
    for q in questions.itertuples():
        conv = conversations[q.conversation_id]
        evidence[q.question_id] = upstream_evidence(items[q.index]["cue_dialogue"], conv["speaker_a"],
                                                    conv["speaker_b"])
    order = {evidence[q]: n for n, q in enumerate(questions.question_id)}
    assert len(order) == N  # the 12 cue dialogues differ, so each request tells its question

    turns = pd.read_parquet(tables / "turns.parquet")
    run = pd.DataFrame([{"question_id": q, "granularity": "turn", "rank": r + 1, "item_id": item, "score": -r}
                        for q in questions.question_id for r, item in enumerate(turns.item_id.head(10))])
    run.to_parquet(out_dir / "run.parquet")

    def respond(body):
        if prompt_task(body) is not None:
            return default_responder(body)
        content = body["messages"][0]["content"]
        shown = content.split("Memory/Evidence:\n", 1)[1].split("\n\nModel Prediction:\n", 1)[0]
        return RECORDED["replies"][order[shown]]["text"]

    cfg = {"llm": {"model": "fake-model", "base_url": None, "concurrency": 4, "backoff": 0.01, "budget_usd": None},
           "qa": {"limit": N}}
    with FakeOpenAIServer(respond) as server:
        cfg["llm"]["base_url"] = server.url
        out = qa.run(benchmark("locomo-plus"), tables, out_dir / "run.parquet", out_dir / "qa.parquet",
                     out_dir / "scores.parquet", cfg, out_dir / "calls.jsonl", out_dir / "cost.json",
                     dataset="locomo-plus", adapter="first", progress=False)
        requests = list(server.requests)
    with FakeOpenAIServer(respond) as server:  # the rerun pays nothing
        qa.run(benchmark("locomo-plus"), tables, out_dir / "run.parquet", out_dir / "qa2.parquet", None,
               {**cfg, "llm": {**cfg["llm"], "base_url": server.url}}, out_dir / "calls.jsonl", progress=False)
        rerun_calls = server.total
    return {"out": out, "requests": requests, "evidence": evidence, "dir": out_dir, "rerun_calls": rerun_calls,
            "cost": json.loads((out_dir / "cost.json").read_text())}


def test_prompt_is_upstreams_byte_for_byte():
    assert {k: hashlib.sha256(PROMPTS[k].encode("utf-8")).hexdigest() for k in UPSTREAM_SHA256} == UPSTREAM_SHA256


def test_requests_are_upstreams_judge_calls(judged):
    out = judged["out"].set_index("question_id")
    asked = [r for r in judged["requests"] if prompt_task(r) is None]
    assert len(asked) == N and {prompt_task(r) for r in judged["requests"]} == {"answer", None}  # no generic verdict
    expected = {upstream_judge_content(judged["evidence"][q], row.answer) for q, row in out.iterrows()}
    assert {r["messages"][0]["content"] for r in asked} == expected
    for r in asked:
        assert len(r["messages"]) == 1 and r["messages"][0]["role"] == "user"
        assert r["temperature"] == 0 and r["max_tokens"] == 512
        assert r["messages"][0]["content"].startswith("Below is a conversation between two people: A and B.")
        assert "：" in r["messages"][0]["content"]  # upstream's full-width colon in the evidence lines
    assert judged["rerun_calls"] == 0


def test_scores_follow_upstreams_parsing_and_scale(judged):
    out = judged["out"].sort_values("question_id", key=lambda s: s.map(
        {q: n for n, q in enumerate(judged["evidence"])}))
    expected = [upstream_label_to_score(upstream_parse_judge_response(r["text"])[0]) for r in RECORDED["replies"]]
    assert expected == RECORDED["expected_scores"]  # the quirks, pinned: 'incorrect' in prose reads as correct
    assert out.judge_score.tolist() == expected
    assert (out.judge_status == "ok").all() and (out.status == "ok").all()
    assert out.correct.tolist() == [s == 1.0 for s in expected] and (out.verdict_by == "llm").all()
    assert out.rubric.str.startswith("locomo-plus-cognitive@").all()
    labels = [json.loads(d)["label"] for d in out.judge_detail]
    assert labels == [upstream_parse_judge_response(r["text"])[0] for r in RECORDED["replies"]]

    scores = pd.read_parquet(judged["dir"] / "scores.parquet")
    scores = scores[~scores.metric.isin(BY_EVIDENCE)]  # the evidence split: tests/test_qa_baselines.py
    assert set(scores.metric) == {"qa/accuracy", "qa/judge_score"} and scores.skip.isna().all()
    by = scores.pivot(index="question_id", columns="metric", values="value").loc[out.question_id]
    assert by["qa/judge_score"].tolist() == expected and by["qa/accuracy"].tolist() == [float(s == 1) for s in expected]
    summary = judged["cost"]["judge_summary"]
    assert summary["qa/judge_score"] == pytest.approx(sum(expected) / N) and summary["judged"] == N
    assert summary["labels"] == {"": 2, "Correct": 1, "correct": 3, "incorrect": 1, "partial": 2, "wrong": 3}
