"""The imports a Python file makes, kept on disk between processes and keyed by the file's bytes.

Every Snakemake start walks the package's imports to version each rule's code (`provenance`); parsing ~90 files
with `ast` was ~0.15 s of a 2 s no-op rerun. The key is the bytes' SHA-256 plus the package that relative
imports resolve against, plus a digest of the parser (`provenance.py`'s bytes), so an entry can never describe
other code than the file now on disk, nor come from an older way of reading imports. The file lives in
the user's cache folder (`$XDG_CACHE_HOME/membench`, else `~/.cache/membench`), shared by every clone and
workdir; it is only a cache: an unreadable or unwritable one costs the parse and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

VERSION = 1
MAX_ENTRIES = 10_000

_entries: dict[str, list[str]] | None = None
_used: set[str] = set()
_dirty = False


def location() -> Path | None:
    """The cache file, or None where there is no cache folder to use (no home directory)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:
            return None
    return Path(base) / "membench" / "imports.json"


def _key(source: bytes, package: str, parser: str) -> str:
    return f"{hashlib.sha256(source).hexdigest()}|{package}|{parser}"


def _read() -> dict[str, list[str]]:
    path = location()
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("entries"), dict):
        return {}
    return data["entries"]


def _loaded() -> dict[str, list[str]]:
    global _entries
    if _entries is None:
        _entries = _read()
    return _entries


def lookup(source: bytes, package: str, parser: str) -> frozenset[str] | None:
    """The import names `parser` found in these bytes in this package, or None."""
    key = _key(source, package, parser)
    names = _loaded().get(key)
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    _used.add(key)
    return frozenset(names)


def remember(source: bytes, package: str, parser: str, names: frozenset[str]) -> None:
    global _dirty
    key = _key(source, package, parser)
    _loaded()[key] = sorted(names)
    _used.add(key)
    _dirty = True


def save() -> None:
    """Write new entries (merged with what other processes wrote meanwhile) atomically; no-op when none."""
    global _dirty, _entries
    if not _dirty:
        return
    merged = {**_read(), **_loaded()}
    if len(merged) > MAX_ENTRIES:  # old versions of edited files pile up: keep what this process used
        merged = {key: merged[key] for key in _used if key in merged}
    path = location()
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".imports-", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"version": VERSION, "entries": merged}, out, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        return
    _entries, _dirty = merged, False
