"""mem0 ranks the same memories the same way whatever its local store went through: fresh, reopened from
disk (local Qdrant loads points newest first), or with a session forgotten and ingested again (deleted slots).
Three sessions say the same sentence, so their memories tie exactly: only the documented tie order (older
session first) may decide, not the store's layout."""

from __future__ import annotations

import importlib.util
import json

import pytest

from membench.embedding.cache import shared_cache
from membench.memory.protocol import MemoryContext, Scope, SessionLog
from membench.runs.registry import builtin_class
from membench.sessions.view import Query

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mem0") is None,
                                reason="mem0ai is not installed (pip install -e '.[mem0]')")

SESSIONS = {  # key -> (date, turns); "see you at the harbour tomorrow" is said in all three
    "s1": ("2023-01-05T10:00:00", ["I bought a red kayak.", "See you at the harbour tomorrow."]),
    "s2": ("2023-02-05T10:00:00", ["See you at the harbour tomorrow.", "My sister moved to Oslo."]),
    "s3": ("2023-03-05T10:00:00", ["The kayak has a leak.", "See you at the harbour tomorrow."]),
}
QUERY = Query("q1", "See you at the harbour tomorrow.")


def write_logs(folder):
    logs = {}
    for key, (date, turns) in SESSIONS.items():
        (folder / key).mkdir(parents=True)
        path = folder / key / "events.jsonl"
        path.write_text("".join(json.dumps({"ref": f"{key}_{i}", "kind": "turn", "role": "user", "speaker": "Ann",
                                            "text": text, "timestamp": date}) + "\n"
                                for i, text in enumerate(turns, 1)), encoding="utf-8")
        logs[key] = SessionLog(key, path, date)
    return logs


def search(store_dir, cache, logs, ingest=(), forget=()):
    system = builtin_class("mem0")()
    system.open(MemoryContext(store_dir, cache))
    try:
        for key in ingest:
            system.ingest(logs[key])
        for key in forget:
            system.forget(key)
            system.ingest(logs[key])
        return [(hit.refs, round(hit.score, 6)) for hit in system.search(QUERY, 2, Scope(tuple(logs), None))]
    finally:
        system.close()


def test_ties_follow_session_time_not_the_store_layout(tmp_path, embedding_dir):
    cache = shared_cache(embedding_dir)
    logs = write_logs(tmp_path / "sessions")
    fresh = search(tmp_path / "fresh", cache, logs, ingest=("s1", "s2", "s3"))
    # the three identical sentences tie at cosine 1 with the query; the older sessions' two come first
    assert [refs for refs, _ in fresh] == [("s1_2",), ("s2_1",)] and fresh[0][1] == fresh[1][1] == 1.0
    search(tmp_path / "resumed", cache, logs, ingest=("s3", "s2"))
    reopened = search(tmp_path / "resumed", cache, logs, ingest=("s1",), forget=("s3",))
    assert reopened == fresh
    assert search(tmp_path / "resumed", cache, logs) == fresh  # read back from disk once more
