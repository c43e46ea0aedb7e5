"""The imports a Python file makes, kept on disk between processes and keyed by the file's bytes.

Every Snakemake start walks the package's imports to version each rule's code (`provenance`); parsing ~90 files
with `ast` was ~0.15 s of a 2 s no-op rerun. The key is the bytes' SHA-256 plus the package that relative
imports resolve against, plus a digest of the parser (`provenance.py`'s bytes), so an entry can never describe
other code than the file now on disk, nor come from an older way of reading imports. The entries are
`imports.json` of the user's cache folder (`membench.jobs.disk_cache`): only a cache, whose loss costs the parse.
"""

from __future__ import annotations

import hashlib

from membench.jobs.disk_cache import JsonCache

VERSION = 1
MAX_ENTRIES = 10_000

_CACHE = JsonCache("imports.json", VERSION, MAX_ENTRIES)


def _key(source: bytes, package: str, parser: str) -> str:
    return f"{hashlib.sha256(source).hexdigest()}|{package}|{parser}"


def lookup(source: bytes, package: str, parser: str) -> frozenset[str] | None:
    """The import names `parser` found in these bytes in this package, or None."""
    names = _CACHE.get(_key(source, package, parser))
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    return frozenset(names)


def remember(source: bytes, package: str, parser: str, names: frozenset[str]) -> None:
    _CACHE.put(_key(source, package, parser), sorted(names))


def save() -> None:
    """Write new entries (merged with what other processes wrote meanwhile) atomically; no-op when none."""
    _CACHE.save()
