"""`membench validate` for a memory system (ingest, then search): the run-time checks, on a small chat history.

The system ingests three sessions written as real session logs in a temporary folder (the form the rank_memory
stage hands it), is searched with k = 2 and k = 0, twice, and each answer goes through the checks the stage applies
(`membench.sessions.checks`): ids from the haystack only, no id twice in a hit, finite float scores, at most k hits.
A system that makes model calls is checked up to its ingest only (no endpoint here).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping

from membench.embedding.cache import shared_cache
from membench.memory.protocol import MemoryContext, MemorySystem, Scope, SessionLog
from membench.sessions.checks import hits_problems
from membench.sessions.view import Haystack, Query


def call(fn: Callable[[], Any]) -> tuple[Any, str | None]:
    """(its value, None), or (None, the crash in one line): `membench validate` reports a crash as a finding."""
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 -- any crash is a finding
        return None, f"{type(exc).__name__}: {exc}"


def write_logs(haystack: Haystack, directory: Path) -> list[SessionLog]:
    """The haystack's sessions as `<key>/events.jsonl` logs, as the ingest stage writes them."""
    logs = []
    for session in haystack.sessions:
        path = directory / session.session_id / "events.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps({"ref": e.ref, "kind": e.kind, "role": e.role, "text": e.text,
                                            "timestamp": e.timestamp}) + "\n" for e in session.events),
                        encoding="utf-8")
        logs.append(SessionLog(session.session_id, path, session.timestamp))
    return logs


def validate_memory_system(cls: type[MemorySystem], params: Mapping[str, Any], haystack: Haystack,
                           query: Query) -> list[str]:
    """Problems found with a memory system, in plain words (empty = OK)."""
    system, error = call(lambda: cls(**dict(params)))
    if error:
        return [f"it does not load with params {dict(params)!r}: {error}"]
    if not isinstance(getattr(system, "name", None), str) or system.name == MemorySystem.name:
        return ["it has no name of its own: set the class attribute `name` to a short string"]
    refs = {s.session_id for s in haystack.sessions} | {e.ref for s in haystack.sessions for e in s.events}
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="membench-validate-") as tmp:
        root = Path(tmp)
        logs = write_logs(haystack, root / "session-logs")
        scope = Scope(tuple(log.key for log in logs), root / "session-logs")
        context = MemoryContext(root / "store", shared_cache(root / "embeddings"))
        context.store_dir.mkdir()
        for step, fn in (("open()", lambda: system.open(context)), ("prepare()", lambda: system.prepare(logs, [query])),
                         *((f"ingest() of {log.key}", lambda log=log: system.ingest(log)) for log in logs)):
            _, error = call(fn)
            if error:
                return [f"{step} crashed: {error}"]
        if system.makes_model_calls:
            call(system.close)
            return problems
        answers = {}
        for k in (2, 0, 2):
            hits, error = call(lambda k=k: list(system.search(query, k, scope)))
            if error:
                problems.append(f"search() crashed with k={k}: {error}")
                continue
            problems += [f"search() with k={k} {p}" for p in hits_problems(hits, k, refs)]
            answers.setdefault(k, []).append([(tuple(h.refs), h.score) for h in hits])
        if len(answers.get(2, [])) == 2 and answers[2][0] != answers[2][1]:
            problems.append("search() gave a different answer when asked the same question twice "
                            "(it must be deterministic)")
        _, error = call(system.close)
        if error:
            problems.append(f"close() crashed: {error}")
    return list(dict.fromkeys(problems))
