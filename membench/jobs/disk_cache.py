"""A small JSON file of key -> value entries in the user's cache folder, kept between processes.

Every Snakemake start recomputes things that rarely change (the imports of each project file, the sha256 of a
local dataset's files); a key that pins down its inputs lets a later start reuse the value. The file lives in
`$XDG_CACHE_HOME/membench` (else `~/.cache/membench`), shared by every clone and workdir; it is only a cache:
an unreadable or unwritable one costs the recomputation and nothing else.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_folder() -> Path | None:
    """The folder, or None where there is none to use (no home directory)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:
            return None
    return Path(base) / "membench"


class JsonCache:
    """Entries of one file (`name` in the cache folder); a file of another `version` is ignored. Past
    `max_entries`, a save keeps only the entries this process used (old keys pile up as files change)."""

    def __init__(self, name: str, version: int, max_entries: int):
        self.name, self.version, self.max_entries = name, version, max_entries
        self._entries: dict[str, Any] | None = None
        self._used: set[str] = set()
        self._dirty = False

    def location(self) -> Path | None:
        folder = cache_folder()
        return folder / self.name if folder is not None else None

    def _read(self) -> dict[str, Any]:
        path = self.location()
        if path is None:
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != self.version or not isinstance(
                data.get("entries"), dict):
            return {}
        return data["entries"]

    def _loaded(self) -> dict[str, Any]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def get(self, key: str) -> Any:
        """The stored value, or None."""
        value = self._loaded().get(key)
        if value is not None:
            self._used.add(key)
        return value

    def put(self, key: str, value: Any) -> None:
        self._loaded()[key] = value
        self._used.add(key)
        self._dirty = True

    def save(self) -> None:
        """Write new entries (merged with what other processes wrote meanwhile) atomically; no-op when none."""
        if not self._dirty:
            return
        merged = {**self._read(), **self._loaded()}
        if len(merged) > self.max_entries:
            merged = {key: merged[key] for key in self._used if key in merged}
        path = self.location()
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"version": self.version, "entries": merged}, out, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
            return
        self._entries, self._dirty = merged, False
