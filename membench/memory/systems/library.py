"""What the memory systems built on a third-party library share: telemetry off, a lazy import that names the
extra, and a session log as (ref, text, session) turns.

Every one of them ingests what a product would store for a chat turn: `turn_text` (the turn's words plus the
caption of an image it shares; with `content: unit`, the dataset's retrieval unit instead, as for mem0), one memory
per turn, its ref as the library's id and the session key as
metadata, so a hit points straight back at its turn. Their embedder is membench's embedding cache (the packaged
all-MiniLM-L6-v2, normalised float32 rows), so their vectors are the `dense` adapter's, bit for bit, and a
text embedded once is never embedded again by any run.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import version
from types import ModuleType
from typing import Any, ClassVar

from membench.memory.protocol import MemorySystem, SessionLog
from membench.sessions.reader import read_events
from membench.sessions.view import turn_text, unit_text

# Read by the libraries (or libraries they pull in) at import time: no usage pings, no tracing. (No library
# model is loaded at all: each gets membench's embedder, so nothing would be downloaded either.)
QUIET = {"ANONYMIZED_TELEMETRY": "False", "CHROMA_TELEMETRY": "False", "LLAMA_INDEX_TELEMETRY": "false",
         "DO_NOT_TRACK": "1", "POSTHOG_DISABLED": "1", "SCARF_NO_ANALYTICS": "true", "HF_HUB_DISABLE_TELEMETRY": "1",
         "LANGCHAIN_TRACING_V2": "false", "LANGSMITH_TRACING": "false", "TOKENIZERS_PARALLELISM": "false",
         "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # litellm (A-MEM imports it) would fetch its price map at import


def quiet_import(module: str, extra: str, system: str) -> ModuleType:
    """Import an optional library with telemetry off, or say which membench extra installs it."""
    for var, value in QUIET.items():
        os.environ[var] = value
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"the {system} memory system needs the optional extra: pip install 'membench[{extra}]' "
                          f"({module} could not be imported: {exc})") from exc


CONTENT = {  # the `content` parameter -> what the report says was ingested
    "message": "each turn's text (+ image caption)",
    "unit": "each turn's retrieval unit (datasets.<name>.units, e.g. LoCoMo's dated 'X said' lines)",
}


def content_param(system: str, params: dict) -> str:
    content = params.get("content", "message")
    if content not in CONTENT:
        raise ValueError(f"{system}: content must be one of {sorted(CONTENT)}, got {content!r}")
    return content


def check_params(system: str, params: dict, known: dict) -> dict:
    """The parameters with defaults filled in; an unknown one is an error naming the known ones."""
    unknown = set(params) - set(known)
    if unknown:
        raise ValueError(f"{system}: unknown parameter(s) {sorted(unknown)}; known: {sorted(known)}")
    merged = {**known, **params}
    content_param(system, merged)
    return merged


def session_turns(log: SessionLog, content: str = "message") -> list[tuple[str, str]]:
    """The session's turns as (ref, text) in log order; text = `turn_text`, or `unit_text` for content "unit"."""
    text = unit_text if content == "unit" else turn_text
    return [(e.ref, text(e)) for e in read_events(log.path) if e.kind == "turn"]


def embed_ahead(cache, logs, queries, content: str) -> None:
    """`prepare`: embed every turn still to ingest and every question in one batch (the libraries embed a
    session, or a question, per call)."""
    cache.encode([t for log in logs for _, t in session_turns(log, content)] + [q.text for q in queries])


class LibrarySystem(MemorySystem):
    """What the library systems share: their parameters checked against `defaults` (`content` at least), what the
    report says goes in (`stored_as`), the library's version in the run's config (set `self._version` in `open`),
    and one store for every session (`shared_store`, searched with the question's sessions) or one per haystack.
    `prepare` embeds ahead with membench's cache, which these libraries are given as their embedder."""

    defaults: ClassVar[dict[str, Any]] = {"content": "message"}
    stored_as: ClassVar[str] = ""
    shared_store: ClassVar[bool] = False

    def __init__(self, **params: Any):
        super().__init__(**check_params(self.name, params, self.defaults))
        self._version: dict[str, str] = {}

    @property
    def shares_sessions(self) -> bool:
        return self.shared_store

    def ingests(self) -> str:
        return CONTENT[self.params["content"]] + self.stored_as

    def config(self) -> dict[str, Any]:
        return {**super().config(), **self._version}

    def import_library(self, module: str, extra: str, *distributions: str) -> ModuleType:
        """The library, imported with telemetry off (`quiet_import`), and the versions of its distributions
        recorded for the run's config (`chromadb_version`, `engram_search_version`, ...)."""
        library = quiet_import(module, extra, self.name)
        self._version = {f"{d.replace('-', '_')}_version": version(d) for d in distributions}
        return library

    def prepare(self, logs, queries) -> None:
        embed_ahead(self.context.embedding_cache, logs, queries, self.params["content"])
