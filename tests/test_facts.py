"""facts stage against the real client and the loopback server; LoCoMo observation facts; bm25+facts."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from membench.benchmarks.registry import benchmark
from membench.adapters.facts import FactsAdapter
from membench.runs.registry import load_adapter
from membench.errors import InputError
from membench.facts.extract import facts_parser, render_session
from membench.llm.replies import MalformedReply
from membench.report.costs import cost_table
from membench.sessions.reader import SessionStore, read_events
from membench.sessions.view import Query
from membench.stages import facts_llm as facts
from openai_server import FakeOpenAIServer, default_responder, fake_facts, fake_server, prompt_input  # noqa: F401

MODEL = "fake-model"
LOCOMO_BY_CONVERSATION = {"conv-26": 184, "conv-30": 169, "conv-41": 324, "conv-42": 266, "conv-43": 267,
                          "conv-44": 277, "conv-47": 268, "conv-48": 291, "conv-49": 240, "conv-50": 255}


def config(server, **llm) -> dict:
    return {"llm": {"model": MODEL, "base_url": server.url, "concurrency": 4, "backoff": 0.01, "budget_usd": None,
                    **llm}}


def distinct_sessions(folder: Path) -> set[str]:
    return set(pd.read_parquet(folder / "turns.parquet").session_key)


def test_longmemeval_facts_one_call_per_distinct_session(ingested, fake_server, tmp_path):
    folder = ingested["longmemeval"]
    keys = distinct_sessions(folder)
    assert len(keys) == 80
    out, cache = tmp_path / "facts", tmp_path / "calls.jsonl"
    manifest = facts.run(benchmark("longmemeval"), folder, out, config(fake_server), cache, tmp_path / "cost.json",
                         dataset="lme", progress=False)
    assert fake_server.total == 80 and fake_server.by_task == {"facts": 80}
    assert set(fake_server.by_hash.values()) == {1}
    # the facts the server gave, counted from what it was sent (its rule: a fact per sentence, <= 20)
    expected = sum(len(fake_facts(prompt_input(body))["facts"]) for body in fake_server.requests)
    assert manifest["facts"] == expected > 80
    assert manifest["sessions"] == 80 and manifest["sessions_with_facts"] == 80
    assert manifest["failures"] == 0 and manifest["not_made"] == 0 and manifest["status"] == "complete"
    assert manifest["source"] == f"llm:{MODEL}" and manifest["dropped_turn_numbers"] == 0
    assert {p.stem for p in out.glob("*.jsonl")} == keys
    assert json.loads((out / "manifest.json").read_text())["facts"] == expected

    # fact logs: refs, about and timestamps point into their own session; SessionStore loads them
    store = SessionStore(folder, user_turns_only=True, facts_dir=out)
    total = 0
    for key in sorted(keys):
        session = store.session(key)
        turns = {e.ref: e for e in session.events if e.kind == "turn"}
        fs = [e for e in session.events if e.kind == "fact"]
        total += len(fs)
        for n, fact in enumerate(fs, 1):
            assert fact.ref == f"{key}_f{n}" and fact.role == "memory" and fact.source == f"llm:{MODEL}"
            assert fact.timestamp == session.timestamp and len(fact.about) == 1
            # a fact is a sentence of the turn it is about (the prompt cuts long turns, ending them in "…")
            assert " ".join(fact.text.rstrip("…").split()) in " ".join(turns[fact.about[0]].text.split())
    assert total == expected

    # rerun: every session is a cache hit -- zero calls
    again = facts.run(benchmark("longmemeval"), folder, out, config(fake_server), cache, tmp_path / "cost.json",
                      dataset="lme", progress=False)
    assert fake_server.total == 80 and again["facts"] == expected
    cost = json.loads((tmp_path / "cost.json").read_text())
    assert cost["summary"]["stages"]["facts"]["cache_hits"] == 80 and cost["summary"]["stages"]["facts"]["calls"] == 0
    assert "| facts | lme |" in cost_table([tmp_path / "cost.json"])
    assert "zero model calls" in cost_table([])


def test_malformed_and_failed_sessions_get_no_facts(ingested, tmp_path):
    folder = ingested["longmemeval"]
    target = sorted(distinct_sessions(folder))[0]
    first_line = json.loads((folder / "sessions" / target / "events.jsonl").read_text().splitlines()[0])["text"]
    marker = " ".join(first_line.split())[:60]
    wrong_shape = sorted(distinct_sessions(folder))[1]
    wrong_marker = " ".join(json.loads((folder / "sessions" / wrong_shape / "events.jsonl")
                                       .read_text().splitlines()[0])["text"].split())[:60]

    def responder(body):
        if wrong_marker in prompt_input(body):
            return json.dumps({"facts": [{"text": "no fact key", "turns": [1]}]})  # wrong shape, every time
        return default_responder(body)

    with FakeOpenAIServer(responder) as server:
        server.add_fault("malformed", times=3, match=marker)  # the ask and both repair re-asks
        # 2 of 80 sessions fail: 2.5%, tolerated under a 5% threshold (the default 2% would fail the stage)
        manifest = facts.run(benchmark("longmemeval"), folder, tmp_path / "f", config(server, max_failed_share=0.05),
                             tmp_path / "c.jsonl", progress=False)
    assert manifest["failures"] == 2 and manifest["sessions_with_facts"] == 78 and manifest["status"] == "complete"
    failed = {f["session_key"]: f["error"] for f in manifest["failed_sessions"]}
    assert set(failed) == {target, wrong_shape}
    assert "facts[0] needs a non-empty string 'fact'" in failed[wrong_shape]
    assert not (tmp_path / "f" / f"{target}.jsonl").exists()
    assert not (tmp_path / "f" / f"{wrong_shape}.jsonl").exists()
    assert server.total == 80 + 2 + 2  # each failing session: 1 ask + 2 repairs


def test_facts_parser_shapes():
    parse = facts_parser()
    assert parse('{"facts": [{"fact": " A  b ", "turns": [2, "3"]}, "bare fact", {"fact": "c", "turns": 4}]}') == [
        ("A b", [2, 3]), ("bare fact", []), ("c", [4])]
    assert parse('```json\n{"facts": []}\n```') == []
    for bad in ('{"facts": "x"}', '{"facts": [{"fact": ""}]}', '{"facts": [{"fact": "x", "turns": [true]}]}',
                '{"facts": [{"fact": "x", "turns": ["two"]}]}', '{"facts": [3]}', '{"fact": []}', 'no json'):
        with pytest.raises(MalformedReply):
            parse(bad)


def test_turn_numbers_map_to_refs_and_bad_numbers_are_dropped(ingested):
    folder = ingested["locomo"]
    key = sorted(distinct_sessions(folder))[0]
    events = read_events(folder / "sessions" / key / "events.jsonl")
    session = render_session(key, events, max_turn_chars=30)
    assert session.n_turns == len(events) and session.numbering[1] == f"{key}_1"
    assert session.turns.splitlines()[0].startswith(f"[1] {events[0].speaker}: ")
    assert all(len(line.split(": ", 1)[1]) <= 30 for line in session.turns.splitlines())
    from membench.facts.extract import fact_records
    records, dropped = fact_records(session, [("x", [2, 2, 999]), ("y", [])], "llm:m")
    assert dropped == 1 and records[0]["about"] == [f"{key}_2"] and records[1]["about"] == []
    assert [r["ref"] for r in records] == [f"{key}_f1", f"{key}_f2"]


def test_procedural_is_out_of_scope(ingested, fake_server, tmp_path):
    with pytest.raises(InputError, match=r"covers locomo, longmemeval sessions, not 'procedural' \(its benchmark"):
        facts.run(benchmark("procedural"), ingested["procedural"], tmp_path / "f", config(fake_server), tmp_path / "c.jsonl")
    assert fake_server.total == 0


def test_bm25_plus_facts_differs_only_through_fact_text(ingested, tmp_path):
    folder = ingested["longmemeval"]
    store = SessionStore(folder, user_turns_only=True)
    hay_key = store.haystack_keys()[0]
    haystack = store.haystack(hay_key)
    target = haystack.sessions[5]
    user_turns = [e for e in target.events if e.kind == "turn" and e.role == "user"]
    marker = " ".join(user_turns[1].text.split())[:60]
    number = target.events.index(user_turns[1]) + 1

    def responder(body):  # one fact, about the target session's second user turn; nothing elsewhere
        if marker in prompt_input(body):
            return json.dumps({"facts": [{"fact": "The user keeps a pet zorblax named Quimby.", "turns": [number]}]})
        return json.dumps({"facts": []})

    with FakeOpenAIServer(responder) as server:
        manifest = facts.run(benchmark("longmemeval"), folder, tmp_path / "facts", config(server), tmp_path / "c.jsonl",
                             progress=False)
    assert manifest["facts"] == 1 and manifest["sessions_with_facts"] == 1

    with_facts = SessionStore(folder, user_turns_only=True, facts_dir=tmp_path / "facts")
    plain, augmented = load_adapter("bm25", {}), FactsAdapter(load_adapter("bm25", {}))
    assert augmented.name == "bm25+facts" and "facts" in augmented.needs
    assert augmented.granularities == plain.granularities and augmented.uses_metadata == ()
    assert augmented.config() == {"base": "bm25", "base_config": plain.config(), "with_facts": True}
    query = Query("qz", "zorblax Quimby")
    hay = with_facts.haystack(hay_key)
    assert not hay.with_facts  # the store serves facts; only the wrapper indexes them
    turn_plain = plain.rank(query, hay, "turn", 5)
    turn_aug = augmented.rank(query, hay, "turn", 5)
    assert turn_plain[0][1] == 0.0  # no turn says "zorblax" or "Quimby"
    assert turn_aug[0][0] == user_turns[1].ref and turn_aug[0][1] > 0
    assert augmented.rank(query, hay, "session", 1)[0][0] == target.session_id

    # without fact text the wrapper ranks exactly like its base: no facts_dir, or fact logs without facts
    for q, h in list(with_facts.queries())[:2]:
        for gran in ("turn", "session"):
            assert plain.rank(q, store.haystack(h), gran, 50) == augmented.rank(q, store.haystack(h), gran, 50)
    empty = tmp_path / "empty"
    empty.mkdir()
    for p in (tmp_path / "facts").glob("*.jsonl"):
        (empty / p.name).write_text("")
    empty_store = SessionStore(folder, user_turns_only=True, facts_dir=empty)
    q, h = next(empty_store.queries())
    hay = empty_store.haystack(h)
    assert plain.rank(q, hay, "turn", 400) == augmented.rank(q, hay, "turn", 400)


def test_locomo_observations_zero_calls(ingested, locomo_dir, tmp_path):
    folder = ingested["locomo"]
    out = tmp_path / "obs"
    manifest = facts.observations(locomo_dir / "locomo10.json", folder, out)
    assert manifest["facts"] == 2541 and manifest["sessions"] == 272
    assert manifest["refs"] == 2561 and manifest["comma_split"] == 5
    assert manifest["unmapped_refs"] == 0 and manifest["unmapped_sessions"] == 0
    assert manifest["facts_without_turns"] == 0 and manifest["malformed_observations"] == 0
    by_conv = Counter()
    for session_id, n in manifest["facts_by_session"].items():
        by_conv[session_id.split("/")[0]] += n
    assert dict(by_conv) == LOCOMO_BY_CONVERSATION
    fb = manifest["facts_by_session"]
    assert (fb["conv-26/session_1"], fb["conv-44/session_26"], fb["conv-30/session_15"]) == (7, 9, 4)

    # independently from the raw file: a fact's about refs are the turns with those dia_ids
    raw = json.loads((locomo_dir / "locomo10.json").read_text())
    turns = pd.read_parquet(folder / "turns.parquet")
    conv44 = next(s for s in raw if s["sample_id"] == "conv-44")
    obs = conv44["observation"]["session_26_observation"]["Andrew"]
    fact_text, dia = next((f, d) for f, d in obs if d == "D26:14, D26:34, D26:42")
    part = turns[turns.session_id == "conv-44/session_26"]
    key = part.session_key.iloc[0]
    expected = [f"{key}_{t + 1}" for t in part.set_index("item_id").loc[["D26:14", "D26:34", "D26:42"]].turn_index]
    store = SessionStore(folder, facts_dir=out)
    events = store.session(key).events
    fact = next(e for e in events if e.kind == "fact" and e.text == " ".join(fact_text.split()))
    assert list(fact.about) == expected and fact.source == "locomo-observation" and fact.speaker == "Andrew"
    assert sum(e.kind == "fact" for e in events) == 9
    assert re.fullmatch(rf"{key}_f\d+", fact.ref)
    assert json.loads((out / "manifest.json").read_text())["facts"] == 2541
