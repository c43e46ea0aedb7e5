"""Model stages survive what real runs do to them: SIGTERM mid-stage, a budget stop, flaky servers, and
keys that must never be written anywhere. Every check counts the calls the loopback server received."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from membench.benchmarks.registry import benchmark
from membench.runs.registry import load_adapter
from membench.report.costs import cost_table
from membench.stages import facts_llm as facts
from membench.stages import judge, qa
from membench.llm.stage_calls import StageStopped
from membench.stages.rank import rank_dataset
from openai_server import FakeOpenAIServer, default_responder, prompt_task

ROOT = Path(__file__).resolve().parents[1]
MODEL = "fake-model"
KEY = "sk-test-NEVER-WRITE-ME-4b9e2c71d0"
PRICES = {MODEL: {"input_per_1m": 1.0, "output_per_1m": 0.0}}


def llm(server, **kw) -> dict:
    return {"model": MODEL, "base_url": server.url, "concurrency": 2, "backoff": 0.01, "budget_usd": None, **kw}


def cache_records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


@pytest.fixture(scope="module")
def procedural_run(ingested, tmp_path_factory):
    path = tmp_path_factory.mktemp("proc-run") / "bm25.parquet"
    rank_dataset(benchmark("procedural"), ingested["procedural"], load_adapter("bm25", {}), 10).to_parquet(path)
    return path


def test_sigterm_mid_stage_then_rerun_repays_nothing(ingested, tmp_path):
    folder = ingested["longmemeval"]
    out, cache = tmp_path / "facts", tmp_path / "calls.jsonl"
    script = ("import json, sys\nfrom pathlib import Path\nfrom membench.benchmarks.registry import benchmark\n"
              "from membench.stages import facts_llm as facts\n"
              "facts.run(benchmark('longmemeval'), Path(sys.argv[2]), Path(sys.argv[3]), json.loads(sys.argv[1]), "
              "Path(sys.argv[4]), Path(sys.argv[5]), dataset='lme', progress=False)\n")
    with FakeOpenAIServer(delay=0.15) as server:
        cfg = {"llm": llm(server)}
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.Popen([sys.executable, "-c", script, json.dumps(cfg), str(folder), str(out), str(cache),
                                 str(tmp_path / "cost.json")], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while server.answered < 8 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read()
        proc.send_signal(signal.SIGTERM)  # how Snakemake and SLURM stop a job
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode != 0
        assert "StageStopped" in stderr and "stop requested (SIGTERM)" in stderr
        # the calls in flight finished and every answered call is in the cache: nothing was lost
        first = server.total
        assert 8 <= first < 80 and server.answered == first
        records = cache_records(cache)
        assert len(records) == first and {r["status"] for r in records} == {"ok"}
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["status"] == "interrupted" and manifest["not_made"] == 80 - first
        assert len(list(out.glob("*.jsonl"))) == first
        cost = json.loads((tmp_path / "cost.json").read_text())
        assert cost["status"] == "interrupted" and cost["summary"]["stages"]["facts"]["calls"] == first

        # rerun: only the missing sessions are asked; every content hash reached the server exactly once
        server.delay = 0.0
        manifest = facts.run(benchmark("longmemeval"), folder, out, cfg, cache, tmp_path / "cost.json", dataset="lme",
                             progress=False)
        assert server.total == 80 and set(server.by_hash.values()) == {1}
        assert manifest["status"] == "complete" and manifest["sessions_with_facts"] == 80
        assert len(list(out.glob("*.jsonl"))) == 80 and len(cache_records(cache)) == 80


def test_sigterm_during_qa_answers_skips_verdicts_and_resumes(ingested, tmp_path):
    folder = ingested["locomo"]
    turns = pd.read_parquet(folder / "turns.parquet")
    conv = turns[turns.conversation_id == "conv-26"].sort_values(["session_key", "turn_index"])
    questions = pd.read_parquet(folder / "questions.parquet").head(12)
    run = pd.DataFrame([(qid, r + 1, item, 1.0 / (r + 1), "turn") for qid in questions.question_id
                        for r, item in enumerate(conv.item_id.head(5))],
                       columns=["question_id", "rank", "item_id", "score", "granularity"])
    run.to_parquet(tmp_path / "run.parquet")
    answers = []

    def responder(body):
        if prompt_task(body) == "answer":
            answers.append(1)
            if len(answers) == 4:  # a real SIGTERM to this process while the answer batch runs
                os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
        return default_responder(body)

    cfg_args = dict(dataset="locomo", adapter="hand", progress=False)
    with FakeOpenAIServer(responder) as server:
        cfg = {"llm": llm(server), "qa": {"limit": 12}}
        with pytest.raises(StageStopped) as stopped:
            qa.run(benchmark("locomo"), folder, tmp_path / "run.parquet", tmp_path / "qa.parquet", tmp_path / "s.parquet", cfg,
                   tmp_path / "calls.jsonl", tmp_path / "cost.json", **cfg_args)
        assert stopped.value.status == "interrupted"
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is restored
        partial = pd.read_parquet(tmp_path / "qa.parquet")
        asked = server.total
        assert server.by_task == {"answer": asked} and 4 <= asked < 12  # no verdict call was started
        assert (partial.status == "interrupted").all() and partial.correct.isna().all()
        assert (partial.answer_status == "ok").sum() == asked
        out = qa.run(benchmark("locomo"), folder, tmp_path / "run.parquet", tmp_path / "qa.parquet", tmp_path / "s.parquet",
                     cfg, tmp_path / "calls.jsonl", tmp_path / "cost.json", **cfg_args)
        assert server.by_task["answer"] == 12 and set(server.by_hash.values()) == {1}
    assert (out.status == "ok").all() and out.correct.notna().all()


def test_budget_stop_then_higher_budget_finishes_without_repaying(ingested, procedural_run, tmp_path):
    folder = ingested["procedural"]
    cache = tmp_path / "calls.jsonl"
    with FakeOpenAIServer(usage=(1000, 0)) as server:  # every call costs exactly $0.001
        def cfg(budget):
            return {"llm": llm(server, concurrency=1, prices=PRICES, budget_usd=budget), "judge": {"k": 3}}

        with pytest.raises(StageStopped, match=r"budget of \$0.005 reached after 5 calls") as stopped:
            judge.run(folder, procedural_run, tmp_path / "j.parquet", cfg(0.005), cache, tmp_path / "cost.json",
                      dataset="procedural", adapter="bm25", progress=False)
        assert stopped.value.status == "budget" and server.total == 5
        partial = pd.read_parquet(tmp_path / "j.parquet")
        assert (partial.status == "ok").sum() == 5 and set(partial.status) == {"ok", "budget"}
        assert partial[partial.status == "budget"].score.isna().all()
        cost = json.loads((tmp_path / "cost.json").read_text())
        assert cost["status"] == "budget" and cost["summary"]["stages"]["judge"]["budget_stopped"] > 0
        assert "budget" in cost_table([tmp_path / "cost.json"])

        # the same budget again: the cache's earlier spend counts, so no new call at all
        with pytest.raises(StageStopped):
            judge.run(folder, procedural_run, tmp_path / "j.parquet", cfg(0.005), cache, None, progress=False)
        assert server.total == 5

        done = judge.run(folder, procedural_run, tmp_path / "j.parquet", cfg(1.0), cache, tmp_path / "cost.json",
                         progress=False)
        distinct = len(set(server.by_hash))
        assert server.total == distinct and set(server.by_hash.values()) == {1}
        assert (done.status == "ok").all()
        pd.testing.assert_frame_equal(done[partial.status == "ok"], partial[partial.status == "ok"])
        cost = json.loads((tmp_path / "cost.json").read_text())
        assert cost["summary"]["prior_usd"] == pytest.approx(0.005)
        assert cost["summary"]["stages"]["judge"]["calls"] == distinct - 5


def test_injected_faults_still_give_the_clean_results(ingested, procedural_run, tmp_path):
    folder = ingested["procedural"]
    with FakeOpenAIServer() as clean_server:
        cfg = {"llm": llm(clean_server), "judge": {"k": 2}}
        clean = judge.run(folder, procedural_run, tmp_path / "clean.parquet", cfg, tmp_path / "clean.jsonl",
                          progress=False)
    with FakeOpenAIServer() as server:
        for kind, times in (("429", 2), ("500", 2), ("503", 1), ("hang", 1), ("malformed", 2), ("broken_body", 1),
                            ("disconnect", 1)):
            server.add_fault(kind, times=times, hang_seconds=2.0)
        cfg = {"llm": llm(server, timeout=0.5), "judge": {"k": 2}}
        faulty = judge.run(folder, procedural_run, tmp_path / "faulty.parquet", cfg, tmp_path / "faulty.jsonl",
                           tmp_path / "cost.json", progress=False)
        assert server.stats()["faults_pending"] == []
    pd.testing.assert_frame_equal(clean, faulty)
    assert (faulty.status == "ok").all()
    judge_stage = json.loads((tmp_path / "cost.json").read_text())["summary"]["stages"]["judge"]
    assert judge_stage["retries"] >= 7 and judge_stage["malformed"] == 2 and judge_stage["failures"] == 0


def test_no_key_in_any_file_or_log(ingested, procedural_run, tmp_path, monkeypatch, caplog, capfd):
    monkeypatch.setenv("MEMBENCH_TEST_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    folder = ingested["procedural"]
    with FakeOpenAIServer() as server:
        server.add_fault("500", times=1, echo_auth=True)  # a server that echoes the key in its error body
        cfg = {"llm": llm(server, api_key_env="MEMBENCH_TEST_KEY"), "judge": {"k": 1}}
        judge.run(folder, procedural_run, tmp_path / "j.parquet", cfg, tmp_path / "calls.jsonl", tmp_path / "c.json",
                  dataset="procedural", adapter="bm25", progress=True)
        assert server.auth_headers and all(h == f"Bearer {KEY}" for h in server.auth_headers)
        assert server.faults_applied["500"] == 1
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 3
    for p in written:
        assert KEY.encode() not in p.read_bytes(), p
    captured = capfd.readouterr()
    assert KEY not in caplog.text and KEY not in captured.out and KEY not in captured.err
    assert "***" in caplog.text  # the echoed key was redacted, not dropped silently


def test_stop_request_from_another_thread(ingested, procedural_run, tmp_path):
    """request_stop() (what the SIGTERM handler calls) from outside: queued calls are cancelled."""
    from membench.llm.stage_calls import make_client
    from membench.llm.client import StopRequested
    with FakeOpenAIServer(delay=0.05) as server:
        client = make_client({"llm": llm(server)}, tmp_path / "c.jsonl", "t")
        msgs = [[{"role": "user", "content": f"TASK: answer\nINPUT: fact {i}."}] for i in range(40)]
        threading.Timer(0.2, client.request_stop).start()
        with pytest.raises(StopRequested) as stop:
            client.complete_many(msgs, progress=False)
        made = [r for r in stop.value.results if r is not None]
        assert 0 < len(made) < 40 and server.total == len(made) == len(cache_records(tmp_path / "c.jsonl"))
        first_done = next(i for i, r in enumerate(stop.value.results) if r is not None)
        assert client.complete(msgs[first_done]).cached
        with pytest.raises(StopRequested):  # after a stop, only cache hits are served
            client.complete([{"role": "user", "content": "TASK: answer\nINPUT: something new."}])
        assert server.total == len(made)
        client.close()
