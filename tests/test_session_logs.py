"""Session logs: gold-free, content-addressed, timestamped, and read back through SessionStore."""

from __future__ import annotations

import copy
import json
import os
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from membench.benchmarks.registry import parse_dataset
from membench.stages.ingest import ingest
from membench.sessions.reader import SessionStore

GOLD_KEYS = {"has_answer", "answer", "adversarial_answer", "evidence", "answer_session_ids", "relevance"}


def view_files(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / "sessions").rglob("*") if p.is_file()) + sorted((folder / "view").glob("*"))


def all_view_text(folder: Path) -> str:
    parts = []
    for p in view_files(folder):
        if p.suffix == ".parquet":
            df = pd.read_parquet(p)
            parts.append(" ".join(df.columns) + " " + df.astype(str).to_csv(index=False))
        else:
            parts.append(p.read_text(encoding="utf-8"))
        parts.append(str(p.relative_to(folder)))
    return "\n".join(parts)


@pytest.mark.parametrize("kind", ["locomo", "procedural", "longmemeval"])
def test_logs_carry_no_gold(ingested, parsed, kind):
    folder = ingested[kind]
    for p in (folder / "sessions").rglob("events.jsonl"):
        for line in p.read_text(encoding="utf-8").splitlines():
            assert not GOLD_KEYS & set(json.loads(line)), p
    queries = pd.read_parquet(folder / "view" / "queries.parquet")
    assert not GOLD_KEYS & set(queries.columns)
    assert "question_id" not in queries.columns  # benchmark ids (e.g. `_abs`) stay on the scorer's side
    text = all_view_text(folder)
    tables = parsed[kind].tables()
    # no benchmark session id and no evidence item id appears anywhere in the view
    session_ids = set(tables["turns"]["session_id"])
    leaked = [s for s in session_ids if s in text]
    assert leaked == []
    if kind == "longmemeval":
        assert "answer_" not in text
        answers = set(tables["questions"]["answer"])
        assert not [a for a in answers if f'"{a}"' in text]


def test_gold_permutation_leaves_logs_byte_identical(longmemeval_dir, tmp_path):
    """Moving every gold label (flags, answer sessions, answers) changes no byte the adapters can read."""
    source = longmemeval_dir / "longmemeval_s_cleaned_partial_2q.json"
    records = json.loads(source.read_text(encoding="utf-8"))
    permuted = copy.deepcopy(records)
    for rec in permuted:
        rec["answer"] = "permuted " + rec["answer"]
        for turns in rec["haystack_sessions"]:
            for turn in turns:
                turn.pop("has_answer", None)
        # declare the first haystack session the evidence instead, flagging its first user turn
        first = rec["haystack_sessions"][0]
        for turn in first:
            turn["has_answer"] = False
        next(t for t in first if t["role"] == "user")["has_answer"] = True
        rec["answer_session_ids"] = [rec["haystack_session_ids"][0]]
    outputs = []
    for name, data in (("orig", records), ("perm", permuted)):
        src = tmp_path / name / "in.json"
        src.parent.mkdir()
        src.write_text(json.dumps(data), encoding="utf-8")
        out = tmp_path / name / "out"
        parse_dataset("longmemeval", src).write(out, {})
        ingest(out, out)
        outputs.append(out)
    a, b = (view_files(out) for out in outputs)
    assert [p.relative_to(outputs[0]) for p in a] == [p.relative_to(outputs[1]) for p in b]
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes(), pa
    qrels = [pd.read_parquet(o / "qrels.parquet") for o in outputs]
    assert not qrels[0].equals(qrels[1])  # the gold really did change


def test_shared_sessions_are_written_once(longmemeval_dir, tmp_path):
    records = json.loads((longmemeval_dir / "longmemeval_s_cleaned_partial_2q.json").read_text(encoding="utf-8"))
    twin = copy.deepcopy(records[0])
    twin["question_id"] = "twin_of_852ce960"
    src = tmp_path / "in.json"
    src.write_text(json.dumps(records + [twin]), encoding="utf-8")
    out = tmp_path / "out"
    data = parse_dataset("longmemeval", src)
    data.write(out, {})
    summary = ingest(out, out)
    assert summary == {"sessions": 80, "queries": 3, "haystacks": 3}
    assert len(list((out / "sessions").glob("*/events.jsonl"))) == 80
    assert len(pd.read_parquet(out / "view" / "haystacks.parquet")) == 39 + 41 + 39


def test_log_mtime_is_session_time(ingested, parsed):
    folder = ingested["locomo"]
    turns = parsed["locomo"].tables()["turns"]
    row = turns[(turns.conversation_id == "conv-26") & (turns.item_id == "D1:1")].iloc[0]
    log = folder / "sessions" / row["session_key"] / "events.jsonl"
    assert os.path.getmtime(log) == datetime(2023, 5, 8, 13, 56).timestamp()


def test_reader_returns_question_haystack(ingested, parsed):
    store = SessionStore(ingested["locomo"])
    queries = list(store.queries())
    assert len(queries) == 1986
    query, hay_key = queries[0]
    assert query.text == "When did Caroline go to the LGBTQ support group?"
    assert query.metadata == {}
    haystack = store.haystack(hay_key)
    assert len(haystack.sessions) == 19  # conv-26 has 19 sessions
    docs = haystack.documents("turn")
    assert len(docs) == 419
    # LoCoMo's own retrieval unit (task_eval): "(<session date>) <speaker> said, "<text>""
    assert docs[2].text == ('(1:56 pm on 8 May, 2023) Caroline said, '
                            '"I went to a LGBTQ support group yesterday and it was so powerful."')
    with_meta = next(store.queries(("category",)))[0]
    assert with_meta.metadata == {"category": 2}


def test_reader_longmemeval_documents_follow_upstream(ingested, parsed):
    store = SessionStore(ingested["longmemeval"], user_turns_only=True)
    query, hay_key = next(store.queries())
    haystack = store.haystack(hay_key)
    assert len(haystack.sessions) == 39
    assert len(haystack.documents("turn")) == 197  # user turns only
    sessions = haystack.documents("session")
    turns = parsed["longmemeval"].tables()["turns"]
    first_session = turns[turns.session_key == sessions[0].item_id]
    expected = " ".join(first_session[first_session.role == "user"].sort_values("turn_index").text)
    assert sessions[0].text == expected


def test_procedural_reader(ingested):
    store = SessionStore(ingested["procedural"])
    query, hay_key = next(store.queries())
    assert query.text == "Put a soap bar in the cabinet"
    haystack = store.haystack(hay_key)
    assert len(haystack.sessions) == 336
    assert sum(len(s.events) - 1 for s in haystack.sessions) == 4542
    first = haystack.sessions[0]
    assert first.events[0].kind == "task" and first.events[1].action == "go to diningtable 1"
