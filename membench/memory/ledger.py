"""The ingest ledger of one store: which sessions are in it, so an interrupted ingest resumes.

`ingest.jsonl` in the store folder gets a `start` line before a session is handed to the system and a
`done` line (with its time and model calls) after; each line is flushed and fsync'ed. On reopening, a
session with `done` is skipped, and one with `start` but no `done` was cut off: the system `forget`s it
and ingests it again. The ledger is also the record that each distinct session was ingested once.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from membench.errors import InputError


class IngestLedger:
    def __init__(self, store_dir: Path):
        self.path = Path(store_dir) / "ingest.jsonl"
        self.done: dict[str, dict[str, Any]] = {}
        self.started: set[str] = set()
        self.done_count: Counter = Counter()
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                session, event = record["session"], record["event"]
            except (ValueError, KeyError, TypeError):
                if n == len(lines) or (n == len(lines) - 1 and not lines[-1]):
                    continue  # a last line cut off mid-write: that session is simply not done
                raise InputError(self.path, "unreadable ingest ledger line", f"line {n}") from None
            if event == "start":
                self.started.add(session)
            elif event == "done":
                self.done[session] = record
                self.done_count[session] += 1
                self.started.discard(session)

    def cut_off(self) -> set[str]:
        """Sessions whose ingest started but never finished."""
        return set(self.started)

    def _append(self, record: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def start(self, session: str) -> None:
        self._append({"session": session, "event": "start"})
        self.started.add(session)

    def finish(self, session: str, seconds: float, model_calls: int) -> None:
        record = {"session": session, "event": "done", "seconds": round(seconds, 4), "model_calls": model_calls}
        self._append(record)
        self.done[session] = record
        self.done_count[session] += 1
        self.started.discard(session)
