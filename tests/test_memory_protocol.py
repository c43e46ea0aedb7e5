"""The ingest-then-search protocol: hits -> items, ingest once per distinct session, resume, gold-blindness."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from membench.benchmarks.registry import benchmark
from membench.io import atomic_write_parquet
from membench.runs.registry import builtin_class
from membench.memory.run import ranked_items, run_memory
from membench.memory.protocol import Hit
from membench.sessions.build import chat_session
from membench.sessions.view import Haystack
from membench.datasets.run_files import write_trec
from memory_systems import Crash, NoteSystem
from test_gold_permutation import build, write_permuted


def test_hits_become_items_first_mention_first():
    a = chat_session("sa", "2023-01-01", [("user", "x"), ("assistant", "y"), ("user", "z")])
    b = chat_session("sb", "2023-01-02", [("user", "w")])
    haystack = Haystack((a, b), user_turns_only=True)
    turns = {d.item_id for d in haystack.documents("turn")}
    assert turns == {"sa-1", "sa-3", "sb-1"}
    hits = [Hit(("sb-1",), 0.9), Hit(("sa-3", "sa-2", "sa-1"), 0.8),  # a derived fact naming three turns
            Hit(("elsewhere-1",), 0.7), Hit(("sb-1", "sa"), 0.6)]
    items, foreign = ranked_items(hits, "turn", haystack, turns)
    # sa-2 is an assistant turn (not ranked here), "sa" a session key: neither is a turn item; sb-1 is a repeat
    assert items == [("sb-1", 0.9, False), ("sa-3", 0.8, False), ("sa-1", 0.8, False)] and foreign == 1
    items, foreign = ranked_items(hits, "session", haystack, {"sa", "sb"})
    assert items == [("sb", 0.9, False), ("sa", 0.8, False)] and foreign == 1
    # an attributed hit's items carry the flag (the run's `attributed` column); first mention still wins
    items, _ = ranked_items([Hit(("sa-1",), 0.5, "x", attributed=True), *hits], "turn", haystack, turns)
    assert items == [("sa-1", 0.5, True), ("sb-1", 0.9, False), ("sa-3", 0.8, False)]


@pytest.fixture(scope="module")
def shared_fragment(longmemeval_dir, tmp_path_factory):
    """The real LongMemEval fragment plus a third question whose haystack reuses sessions of both others,
    as LongMemEval-S's haystacks do: its own 41 sessions of question 2 and the 37 filler sessions of question 1."""
    records = json.loads((longmemeval_dir / "longmemeval_s_cleaned_partial_2q.json").read_text(encoding="utf-8"))
    first, second = records
    keep = [i for i, sid in enumerate(first["haystack_session_ids"]) if sid not in first["answer_session_ids"]]
    mixed = dict(second, question_id="ba358f49_mixed")
    for field in ("haystack_session_ids", "haystack_sessions", "haystack_dates"):
        mixed[field] = second[field] + [first[field][i] for i in keep]
    source = tmp_path_factory.mktemp("lme_shared_src")
    (source / "longmemeval_s_cleaned_partial_2q.json").write_text(json.dumps(records + [mixed]), encoding="utf-8")
    return build("longmemeval", source, tmp_path_factory.mktemp("lme_shared"))


def test_each_distinct_session_is_ingested_once_and_reused(shared_fragment, tmp_path):
    folder = shared_fragment
    sessions = pd.read_parquet(folder / "turns.parquet").session_key.nunique()
    haystacks = pd.read_parquet(folder / "view" / "haystacks.parquet")
    assert sessions == 80 and len(haystacks) == 39 + 41 + 41 + 37 == 158

    system = NoteSystem()
    run, acc = run_memory(benchmark("longmemeval"), folder, system, 50, tmp_path / "shared")
    assert sorted(system.ingested) == sorted(haystacks.session_key.unique())
    assert set(system.ingested.values()) == {1}  # every distinct session exactly once
    assert acc.as_dict({})["sessions_ingested"] == 80 and acc.stores == 1 and acc.reused == 0
    assert system.calls["search"] == 3 * 2  # three questions x (session, turn)
    assert system.prepared == [(80, 3)]  # told once, before ingest, what the store will hold and be asked
    assert acc.k == {"session": "full", "turn": "full"}

    again = NoteSystem()
    rerun, acc2 = run_memory(benchmark("longmemeval"), folder, again, 50, tmp_path / "shared")
    assert again.calls["ingest"] == 0 and acc2.reused == 80 and again.prepared == [(0, 3)]
    assert rerun.equals(run)

    per_haystack = NoteSystem(share=False)
    run3, acc3 = run_memory(benchmark("longmemeval"), folder, per_haystack, 50, tmp_path / "each")
    assert acc3.stores == 3 and per_haystack.calls["ingest"] == 158  # shared sessions once per store
    assert per_haystack.prepared == [(39, 1), (41, 1), (78, 1)]
    assert run3.equals(run)  # scoping one store by filter gives what separate stores give


def test_a_cut_off_ingest_resumes(ingested, tmp_path):
    folder = ingested["longmemeval"]
    first = NoteSystem(fail_after=30)
    with pytest.raises(Crash):
        run_memory(benchmark("longmemeval"), folder, first, 50, tmp_path / "store")
    assert sum(first.ingested.values()) == 30
    second = NoteSystem()
    run, acc = run_memory(benchmark("longmemeval"), folder, second, 50, tmp_path / "store")
    assert len(second.forgotten) == 1 and acc.resumed == 1  # the half-written session is removed first
    assert acc.reused == 30 and sum(second.ingested.values()) == 50
    assert not set(first.ingested) & set(second.ingested)
    fresh, _ = run_memory(benchmark("longmemeval"), folder, NoteSystem(), 50, tmp_path / "fresh")
    assert run.equals(fresh)


@pytest.mark.parametrize("kind", ["longmemeval", "locomo"])
def test_memory_runs_are_byte_identical_under_gold_permutation(kind, request, tmp_path):
    src_dir = request.getfixturevalue(f"{kind}_dir")
    original = build(kind, src_dir, tmp_path / "orig")
    permuted = build(kind, write_permuted(kind, src_dir, tmp_path / "perm_src", random.Random(7)), tmp_path / "perm")
    assert (original / "qrels.parquet").read_bytes() != (permuted / "qrels.parquet").read_bytes()
    files = []
    for folder in (original, permuted):
        run, acc = run_memory(benchmark(kind), folder, builtin_class("session-log")(), 50, folder / "store")
        # LongMemEval: 2 questions x (whole haystack of turns, of sessions); LoCoMo: k = 50 for both, one search
        assert acc.searches == {"longmemeval": 2 * 2, "locomo": 1986}[kind]
        atomic_write_parquet(run, folder / "run.parquet")
        write_trec(run, folder / "run.trec", "session-log")
        files.append(((folder / "run.parquet").read_bytes(), (folder / "run.trec").read_bytes()))
    assert files[0] == files[1]
