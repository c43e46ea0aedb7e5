"""Append-only, content-addressed cache of model calls (JSON lines, fsync'ed per call).

Key
    ``sha256`` of the canonical JSON (sorted keys, compact separators, UTF-8) of
    ``{"model": ..., "messages": [...], "params": {...}}`` -- the inputs that decide the reply -- plus, when a
    stage gives them, ``"tags"``: labels that are hashed and stored but never sent (the prompt and rubric
    versions of a verdict, the sample number of a re-asked verdict, so N samples are N keys). Endpoint
    details (base_url, API key, timeout, retry settings, stage name) are *not* part of it, so the same
    prompt against another deployment of the same model is a hit, and nothing secret is ever hashed
    or stored. ``None``-valued params are dropped before hashing.

Lines
    One line per completed paid call (and one per request that finally failed), written with a single
    ``write`` + ``flush`` + ``fsync``, so a crash loses at most the call in flight::

        {"key", "model", "request": {"model", "messages", "params"}, "response_text",
         "usage": {"prompt_tokens", "completion_tokens"}, "status": "ok" | "failed", "error"?,
         "stage", "attempt", "finish_reason"?, "repair"?, "ts"}

    The file is therefore also a complete ledger of what was paid for.

Failures
    Lookups return only ``"ok"`` lines (the newest one for a key). A ``"failed"`` line is kept for the
    record (and for the report) but is never a result: the next run asks again. Most failures are
    transient (rate limits, timeouts, 5xx) and a malformed reply may come out right on a second ask;
    the budget caps what such retries can cost. Clients that would rather not re-ask can use
    :meth:`CallCache.last_failure` (``CallPolicy(retry_failed=False)``).

Crash recovery
    A last line without its newline (the process died mid-write) or any other unparsable line is
    skipped with a warning; the next append starts on a fresh line. Nothing is rewritten.

Concurrency
    Thread-safe within one process (a lock). Appends from several processes are serialised with
    ``flock`` so lines never interleave, but each process only sees the lines that existed when it
    opened the file (so two processes may both pay for the same new prompt).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None

log = logging.getLogger("membench.llm")

__all__ = ["CallCache", "make_key", "canonical_request"]

_REQUIRED = ("key", "status")


def canonical_request(model: str, messages: Sequence[Mapping[str, Any]],
                      params: Mapping[str, Any] | None = None, tags: Mapping[str, Any] | None = None) -> dict:
    """The endpoint-independent request record that is hashed and stored (``tags`` only when given)."""
    out = {
        "model": str(model),
        "messages": [dict(m) for m in messages],
        "params": {k: v for k, v in sorted((params or {}).items()) if v is not None},
    }
    kept = {str(k): v for k, v in sorted((tags or {}).items()) if v is not None}
    if kept:
        out["tags"] = kept
    return out


def make_key(model: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None,
             tags: Mapping[str, Any] | None = None) -> str:
    """Cache key of a request: sha256 hex of its canonical JSON."""
    canon = json.dumps(canonical_request(model, messages, params, tags), sort_keys=True,
                       separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


class CallCache:
    """Append-only JSON-lines call cache. See the module docstring for the rules."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._lock = threading.RLock()
        self._ok: dict[str, dict] = {}
        self._failed: dict[str, dict] = {}
        self._lines = 0
        self.skipped_lines = 0
        self._fh = None
        self._needs_newline = False
        self._load()

    # ------------------------------------------------------------------ loading
    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            self._needs_newline = True
        raw_lines = data.split(b"\n")
        last_index = len(raw_lines) - 1
        for lineno, raw in enumerate(raw_lines, start=1):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw.decode("utf-8"))
                if not isinstance(entry, dict) or any(k not in entry for k in _REQUIRED):
                    raise ValueError("not a cache record")
            except (ValueError, UnicodeDecodeError) as exc:
                self.skipped_lines += 1
                where = "truncated last line" if lineno - 1 == last_index else "unreadable line"
                log.warning("call cache %s: ignoring %s %d (%s; probably an interrupted write); "
                            "that call will be made again if needed", self.path, where, lineno,
                            type(exc).__name__)
                continue
            self._index(entry)
            self._lines += 1

    def _index(self, entry: dict) -> None:
        key = entry["key"]
        if entry.get("status") == "ok":
            self._ok[key] = entry
            self._failed.pop(key, None)
        else:
            self._failed[key] = entry

    # ------------------------------------------------------------------ lookups
    def get(self, key: str) -> dict | None:
        """The newest ``"ok"`` record for ``key``, or None. Failed records are never returned."""
        with self._lock:
            return self._ok.get(key)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        """Number of keys with an ``"ok"`` record."""
        with self._lock:
            return len(self._ok)

    def last_failure(self, key: str) -> dict | None:
        """The newest ``"failed"`` record for ``key`` if no ``"ok"`` record followed it."""
        with self._lock:
            return self._failed.get(key)

    def failures(self) -> dict[str, dict]:
        """Keys whose newest record is a failure -> that record."""
        with self._lock:
            return dict(self._failed)

    @property
    def lines(self) -> int:
        """Valid lines in the file (loaded + appended by this process)."""
        return self._lines

    def entries(self) -> Iterator[dict]:
        """Re-read every valid line of the file, in order (skips broken lines silently)."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            for raw in fh:
                try:
                    entry = json.loads(raw.decode("utf-8"))
                except (ValueError, UnicodeDecodeError):
                    continue
                if isinstance(entry, dict) and all(k in entry for k in _REQUIRED):
                    yield entry

    # ------------------------------------------------------------------ writing
    def append(self, entry: Mapping[str, Any]) -> dict:
        """Durably append one record (flush + fsync before returning) and index it."""
        record = dict(entry)
        for k in _REQUIRED:
            if k not in record:
                raise ValueError(f"cache record needs '{k}'")
        if record["status"] not in ("ok", "failed"):
            raise ValueError(f"cache record status must be 'ok' or 'failed', not {record['status']!r}")
        record.setdefault("ts", round(time.time(), 3))
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        with self._lock:
            fh = self._open()
            if self._needs_newline:
                line = b"\n" + line
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                if fcntl is not None:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            self._needs_newline = False
            self._index(record)
            self._lines += 1
        return record

    def _open(self):
        if self._fh is None:
            created = not self.path.exists()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "ab", buffering=0)
            if created:  # make the new directory entry durable too
                try:
                    dfd = os.open(self.path.parent, os.O_RDONLY)
                    try:
                        os.fsync(dfd)
                    finally:
                        os.close(dfd)
                except OSError:
                    pass
        return self._fh

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def __enter__(self) -> "CallCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CallCache({str(self.path)!r}, ok={len(self._ok)}, failed={len(self._failed)})"
