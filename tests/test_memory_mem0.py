"""mem0 as a memory system: raw messages end to end on real LoCoMo, and its own LLM extraction against the
loopback OpenAI-compatible server, where a rerun pays nothing because every call went through the cache."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import random
import shutil
from datetime import datetime, timezone

import pandas as pd
import pytest
import yaml

from conftest import ingested_opening, locomo_slice, longmemeval_slice, run_snakemake
from membench.benchmarks.registry import benchmark
from membench.embedding.cache import shared_cache
from membench.memory.systems import mem0 as mem0_system
from membench.memory.systems.mem0_replies import usable_entries
from membench.runs.registry import builtin_class
from membench.runs.request import RunFiles, RunRequest
from membench.stages import rank_memory
from membench.memory.run import MemoryRunStopped, run_memory
from membench.report.costs import cost_table
from membench.report.headlines import with_ci
from openai_server import FakeOpenAIServer
from test_gold_permutation import build, write_permuted

pytestmark = [pytest.mark.slow, pytest.mark.skipif(importlib.util.find_spec("mem0") is None,
                                                    reason="mem0ai is not installed (pip install -e '.[mem0]')")]


def mem0_responder(body: dict) -> str:
    """mem0's extraction reply format: one memory per new message line."""
    prompt = body["messages"][-1]["content"]
    new = prompt.split("## New Messages", 1)[1].split("## Observation Date", 1)[0]
    lines = [line.strip() for line in new.splitlines() if line.strip()]
    return json.dumps({"memory": [{"text": f"Noted: {line[:300]}"} for line in lines[:3]]})


def llm_config(server, budget: float) -> dict:
    return {"llm": {"model": "fake-model", "base_url": server.url, "timeout": 10, "max_retries": 1,
                    "prices": {"fake-model": {"input_per_1m": 0.5, "output_per_1m": 1.5}}, "budget_usd": budget}}


def test_infer_true_calls_go_through_the_cache(longmemeval_dir, embedding_dir, tmp_path, monkeypatch):
    folder = build("longmemeval", longmemeval_slice(longmemeval_dir, tmp_path / "slice"), tmp_path / "lme")
    searched = []  # mem0 searches its memories with each add's messages as one text: was it embedded beforehand?
    embed = mem0_system._CachedEmbedder.embed

    def recording(self, text, memory_action=None):
        if memory_action == "search":
            searched.append(text in self.cache)
        return embed(self, text, memory_action)

    monkeypatch.setattr(mem0_system._CachedEmbedder, "embed", recording)
    turns = pd.read_parquet(folder / "turns.parquet")
    adds = sum(math.ceil(n / 8) for n in turns.groupby("session_key").size())  # 8 turns per mem0.add
    with FakeOpenAIServer(responder=mem0_responder, usage=(1000, 100)) as server:  # $0.00065 a call
        def run(store: str, name: str, budget: float) -> dict:
            out = tmp_path / name
            request = RunRequest("mem0-infer", "mem0", {"infer": True, "turns_per_add": 8}, benchmark("longmemeval"), 50, folder,
                                 embedding_dir)
            rank_memory.run(request, RunFiles(out / "run.parquet", out / "run.trec", out / "run.json"),
                            out / "cost.json", tmp_path / store, llm_config(server, budget)["llm"],
                            tmp_path / "calls.jsonl", "lme-fragment")
            return json.loads((out / "cost.json").read_text())

        with pytest.raises(MemoryRunStopped, match="budget"):
            run("store-a", "stopped", budget=0.01)  # the budget runs out part-way through the ingest
        paid = server.total
        assert len(searched) >= paid and all(searched)  # a search per add, its text embedded by prepare()
        assert 0 < paid < adds and not (tmp_path / "stopped" / "run.parquet").exists()
        first = run("store-a", "first", budget=10.0)  # resumes: the cut-off session is redone from the cache
        assert server.total == adds and max(server.by_hash.values()) == 1
        assert first["summary"]["stages"]["memory-ingest"]["calls"] == adds - paid
        prompt = server.requests[0]["messages"][-1]["content"]
        today = datetime.now(timezone.utc).date().isoformat()  # mem0's own default
        assert re.search(r"## Current Date\n202[23]-\d\d-\d\d", prompt) and today not in prompt  # the session's date
        again = run("store-b", "again", budget=10.0)  # a fresh store: mem0 ingests everything again...
        assert server.total == adds  # ...and not one request reaches the server
        ingest = again["summary"]["stages"]["memory-ingest"]
        assert ingest["calls"] == 0 and ingest["cache_hits"] == adds
    assert f"| memory-ingest | lme-fragment | mem0-infer | fake-model | 0 | {adds:,} |" in cost_table([again])
    meta = json.loads((tmp_path / "again" / "run.json").read_text())
    assert meta["memory"]["sessions_ingested"] == 12 and meta["memory"]["model_calls"]["memory-ingest"]["calls"] == 0
    runs = [pd.read_parquet(tmp_path / n / "run.parquet") for n in ("first", "again")]
    assert runs[0].equals(runs[1]) and set(runs[0].granularity) == {"session", "turn"}


def test_usable_entries_keeps_what_mem0_can_store():
    """mem0 2.x calls `.get` on every `memory` entry, outside its own error handling: the entries it cannot store
    go, the rest (and any other key) stay as written; a reply mem0 handles by itself passes unchanged."""
    mixed = json.dumps({"memory": [{"text": "a"}, "b", {"text": ""}, {"text": 5}, {"note": "x"},
                                   {"text": "c", "attributed_to": "user"}], "extra": 1})
    kept, dropped = usable_entries(mixed)
    assert dropped == 4 and json.loads(kept) == {"memory": [{"text": "a"}, {"text": "c", "attributed_to": "user"}],
                                                 "extra": 1}
    fenced, dropped = usable_entries('```json\n{"memory": [{"text": "a"}, "b"]}\n```')
    assert dropped == 1 and json.loads(fenced) == {"memory": [{"text": "a"}]}
    assert usable_entries('Sure! {"memory": "one fact"} Hope it helps.') == ('{"memory": []}', 1)
    clean = '{"memory": [{"text": "a"}]}'
    for reply in (clean, "not JSON", '{"facts": ["a"]}', "[1, 2]", "", None):
        assert usable_entries(reply) == (reply, 0)


def test_mem0_infer_survives_replies_mixing_facts_and_strings(locomo_dir, embedding_dir, tmp_path):
    """A small model's reply `{"memory": [{"text": ...}, "a bare string", {"text": ""}]}` crashed mem0's `add`, and
    the rerun crashed on the cached reply. Now the two unusable entries of each reply are dropped and counted, the
    facts are stored with their turns' refs, and a fresh store reads the same replies from the cache."""
    folder = ingested_opening(locomo_dir, tmp_path / "data", sessions=1, turns=6)

    def mixed(body: dict) -> str:
        first = mem0_responder(body)
        return json.dumps({"memory": json.loads(first)["memory"][:1] + ["a bare string", {"text": ""}]})

    params = {"infer": True, "turns_per_add": 2}
    with FakeOpenAIServer(responder=mixed, usage=(1000, 100)) as server:
        def run(store: str, refs: str = "kept") -> dict:
            out = tmp_path / store
            request = RunRequest("mem0-infer", "mem0", params, benchmark("locomo"), 50, folder, embedding_dir)
            rank_memory.run(request, RunFiles(out / "run.parquet", out / "run.trec", out / "run.json"),
                            out / "cost.json", tmp_path / f"{store}-store", llm_config(server, 10.0)["llm"],
                            tmp_path / "calls.jsonl", "locomo", refs=refs)
            return json.loads((out / "run.json").read_text())

        first, again, withheld = run("first"), run("again"), run("withheld", refs="withheld")
        assert server.total == 3  # six turns, two per add
    # each fact quotes the first turn of its add, whose two turns are its refs: attributed to that turn alone
    audit = withheld["memory"]["attribution"]["against_withheld_refs"]
    assert audit["refs_withheld"] == 2 * audit["hits"] and audit["precision"] == 1.0 and audit["recall"] == 0.5
    assert "against_withheld_refs" not in first["memory"]["attribution"]
    for meta in (first, again):
        assert meta["memory"]["system"] == {"extraction_replies": 3, "extraction_entries_dropped": 6,
                                            "extraction_replies_with_drops": 3}
    runs = [pd.read_parquet(tmp_path / n / "run.parquet") for n in ("first", "again")]
    assert runs[0].equals(runs[1]) and set(runs[0].item_id) <= {f"D1:{n}" for n in range(1, 7)}
    assert runs[0].groupby("question_id").size().max() >= 3  # three facts stored, one per add


def test_mem0_runs_are_gold_blind(longmemeval_dir, embedding_dir, tmp_path):
    source = longmemeval_slice(longmemeval_dir, tmp_path / "slice")
    original = build("longmemeval", source, tmp_path / "orig")
    permuted = build("longmemeval", write_permuted("longmemeval", source, tmp_path / "perm_src", random.Random(7)),
                     tmp_path / "perm")
    runs = [run_memory(benchmark("longmemeval"), folder, builtin_class("mem0")(), 50, folder / "store",
                       shared_cache(embedding_dir))[0] for folder in (original, permuted)]
    assert not runs[0].empty and runs[0].equals(runs[1])


def test_mem0_raw_messages_on_locomo_end_to_end(tmp_path, locomo_dir, embedding_dir):
    """mem0 (`infer: false`) beside bm25 through the workflow on real LoCoMo, on two of its conversations (conv-26,
    conv-30: 38 of its 272 sessions, 304 questions), sealed (membench.memory.sealed.parent: its own process, no gold); the
    closing-note figures come from a full run (README "Plugging in a memory system")."""
    work = tmp_path / "work"
    work.mkdir()
    config = {"embeddings_dir": str(embedding_dir), "memory_dir": str(work / "memory"),
              "datasets": {"longmemeval-s": {"enabled": False}, "procedural": {"enabled": False},
                           "locomo": {"kind": "locomo", "path": str(locomo_slice(locomo_dir, tmp_path / "locomo"))}},
              "adapters": {**{n: {"enabled": False} for n in ("bm25-upstream", "bm25-time", "bm25-v2", "dense",
                                                               "hybrid", "substring", "state-aware", "action-only")},
                           "mem0": {"enabled": True, "params": {"infer": False}}},
              "facts": {"source": "none"}, "memory_sealed": True,
              "report": {"bootstrap_resamples": 1000}}
    (work / "mem0.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = run_snakemake(work, work / "mem0.yaml", "--cores", "2", "results/report.md")
    assert done.returncode == 0, done.stderr[-5000:]
    results = work / "results"
    sessions = pd.read_parquet(results / "locomo" / "turns.parquet").session_key.nunique()
    assert sessions == 38
    meta = json.loads((results / "locomo" / "runs" / "mem0.json").read_text())
    assert meta["memory"]["sessions_ingested"] == sessions and meta["memory"]["short_searches"] == {}
    assert meta["memory"]["model_calls"]["memory-ingest"]["calls"] == 0 and meta["depth"] == 100
    assert meta["memory"]["sealed"].startswith("landlock (ABI ")  # the kernel's seal, named with its ABI
    assert "Inserting" not in done.stderr  # mem0's info line per insert goes to the rule's log only
    assert "Inserting" in (work / "logs" / "rank" / "locomo" / "mem0.log").read_text()
    summary = pd.read_parquet(results / "summary.parquet")
    recall = summary[(summary.metric == "evidence_recall@10") & (summary.split == "all") & (summary.group_by == "all")]
    assert set(recall.adapter) == {"bm25", "mem0"}
    report = (results / "report.md").read_text(encoding="utf-8")
    mem0 = recall[recall.adapter == "mem0"].iloc[0]
    row = next(line for line in report.splitlines() if line.startswith("| mem0 |"))  # the retrieval table
    assert with_ci(mem0["mean"], mem0.ci_lo, mem0.ci_hi) in row
    assert f"- locomo / mem0: {meta['memory']['sealed']}" in report
    assert "## Memory systems (ingest, then search)" in report and "- locomo: all 2 runs were asked for k = 100." in report
    assert ("| locomo | mem0 | raw messages: each turn's text (+ image caption) as content, speaker as name, "
            f"session time as created_at | shared | 1 | {sessions} | 0 |") in report

    shutil.rmtree(results / "locomo" / "runs")  # a rerun finds every session in the store
    done = run_snakemake(work, work / "mem0.yaml", "--cores", "2", "results/locomo/runs/mem0.json")
    assert done.returncode == 0, done.stderr[-5000:]
    again = json.loads((results / "locomo" / "runs" / "mem0.json").read_text())
    assert again["memory"]["sessions_ingested"] == 0 and again["memory"]["sessions_reused"] == sessions
