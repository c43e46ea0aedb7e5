"""A-MEM (`a-mem`), a memory library that makes model calls, end to end on real LoCoMo against the loopback
OpenAI-compatible server: every call goes through membench's cache, a budget stop resumes, and an ingest into a
fresh store makes zero requests and ranks the same.

A-MEM makes two model calls and two single-text embeddings per note, so the slice is small: conv-26's first
three sessions (58 turns) and the 25 questions whose evidence lies in them, all from the real file."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re

import pandas as pd
import pytest

from membench.benchmarks.registry import benchmark
from membench.memory.systems.amem import AMemModelCallFailed, note_time
from membench.memory.run import MemoryRunStopped
from membench.runs.request import RunFiles, RunRequest
from membench.stages import rank_memory, score
from conftest import ingested_opening
from openai_server import FakeOpenAIServer

pytestmark = [pytest.mark.data, pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("agentic_memory") is None,
                                 reason="a-mem is not installed (pip install -e '.[amem]')")]
TURNS, QUESTIONS = 58, 25  # conv-26's sessions 1-3: their turns; the QA whose evidence is all in them


def amem_responder(body: dict) -> str:
    """A-MEM's two prompts, answered in the JSON it asks for, as a function of the prompt alone."""
    prompt = body["messages"][-1]["content"]
    digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    if "Content for analysis:" in prompt:
        words = re.findall(r"[A-Za-z]{5,}", prompt.split("Content for analysis:", 1)[1])
        return json.dumps({"keywords": words[:3], "context": f"About {' '.join(words[:2]) or 'nothing'}.",
                           "tags": sorted(set(w.lower() for w in words[:5]))[:3]})
    if "memory evolution agent" in prompt:
        neighbours = re.findall(r"memory_id:(\S+)", prompt)
        evolve = digest % 3 == 0
        return json.dumps({"should_evolve": evolve, "actions": ["strengthen", "update_neighbor"] if evolve else [],
                           "suggested_connections": neighbours[:1], "tags_to_update": ["linked"],
                           "new_context_neighborhood": [f"Seen with note {digest % 97}."] * len(neighbours[:2]),
                           "new_tags_neighborhood": [["evolved"]] * len(neighbours[:2])})
    return "not a prompt A-MEM sends"


@pytest.fixture(scope="module")
def conv26(locomo_dir, tmp_path_factory):
    return ingested_opening(locomo_dir, tmp_path_factory.mktemp("amem"), sessions=3)


def llm(server, budget: float) -> dict:
    return {"model": "fake-model", "base_url": server.url, "timeout": 10, "max_retries": 1,
            "prices": {"fake-model": {"input_per_1m": 0.5, "output_per_1m": 1.5}}, "budget_usd": budget}


def test_amem_on_locomo_through_the_cache(conv26, embedding_dir, tmp_path):
    with FakeOpenAIServer(responder=amem_responder, usage=(1000, 100)) as server:  # $0.00065 a call
        def run(store: str, name: str, budget: float) -> dict:
            out = tmp_path / name
            request = RunRequest("a-mem", "a-mem", {}, benchmark("locomo"), 50, conv26, embedding_dir)
            rank_memory.run(request, RunFiles(out / "run.parquet", out / "run.trec", out / "run.json"),
                            out / "cost.json", tmp_path / store, llm(server, budget), tmp_path / "calls.jsonl",
                            "locomo")
            return json.loads((out / "run.json").read_text())

        with pytest.raises(MemoryRunStopped, match="budget"):
            run("store-a", "stopped", budget=0.04)  # the budget runs out part-way through the ingest
        paid = server.total
        assert 10 < paid < 2 * TURNS - 1 and not (tmp_path / "stopped" / "run.parquet").exists()
        first = run("store-a", "first", budget=10.0)  # resumes: the cut-off session is forgotten (store rebuilt)
        # one analysis per note and one evolution per note after the first; identical prompts are asked once
        assert first["memory"]["system"]["model_calls_made_by_a_mem"] >= 2 * TURNS - 1
        distinct = server.total
        assert max(server.by_hash.values()) == 1 and distinct == len(server.by_hash) > 2 * TURNS - 10
        assert first["memory"]["system"]["unparsed_replies"] == 0 and first["memory"]["sessions_resumed"] == 1
        again = run("store-b", "again", budget=10.0)  # a fresh store: A-MEM asks everything again...
        assert server.total == distinct  # ...and not one request reaches the server
        assert again["memory"]["model_calls"]["memory-ingest"]["calls"] == 0
    runs = [pd.read_parquet(tmp_path / n / "run.parquet") for n in ("first", "again")]
    assert runs[0].equals(runs[1]) and runs[0].question_id.nunique() == QUESTIONS
    scores = score.run(benchmark("locomo"), tmp_path / "first" / "run.parquet", conv26, tmp_path / "scores.parquet")
    counted = scores[scores.skip.isna() & (scores.metric == "evidence_recall@10")]
    # 12 of 25: pinned to one question either way, as Chroma's float32 L2 may order a near tie otherwise on another CPU
    assert len(counted) == QUESTIONS and float(counted.value.mean()) == pytest.approx(0.48, abs=0.041)


def test_a_failed_model_call_stops_the_ingest(conv26, embedding_dir, tmp_path):
    """A-MEM would store the note without the failed call's keywords; membench stops and says so."""
    with FakeOpenAIServer(responder=amem_responder) as server:
        server.add_fault("500", times=50)
        request = RunRequest("a-mem", "a-mem", {}, benchmark("locomo"), 50, conv26, embedding_dir)
        out = tmp_path / "out"
        with pytest.raises(AMemModelCallFailed, match=r"a-mem: a model call failed while ingesting session s\w+"):
            rank_memory.run(request, RunFiles(out / "run.parquet", out / "run.trec", out / "run.json"),
                            out / "cost.json", tmp_path / "store", {**llm(server, 10.0), "max_retries": 0},
                            tmp_path / "calls.jsonl", "locomo")
    assert not (out / "run.parquet").exists()


def test_note_time_is_the_sessions():
    assert note_time("2023-05-08T13:56:00") == "202305081356" and note_time(None) == "000000000000"
