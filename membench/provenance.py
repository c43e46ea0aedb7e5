"""Hashes that tie outputs to the code and data that made them.

Snakemake reruns a `script:` rule when its script changes but not when a module it imports changes;
rules pass `code_version(...)` of the modules they depend on as a param so an edit reruns exactly them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def code_version(*paths: str | Path) -> str:
    """Short hash of the bytes of the given files / folders' .py files (relative to the repo root)."""
    digest = hashlib.sha256()
    for path in sorted(_files(paths)):
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _files(paths) -> set[Path]:
    found: set[Path] = set()
    for p in paths:
        path = Path(p) if Path(p).is_absolute() else REPO / p
        if path.is_dir():
            found.update(f for f in path.rglob("*") if f.is_file() and f.suffix in (".py", ".txt"))
        elif path.exists():
            found.add(path)
        else:
            raise FileNotFoundError(f"code_version: {path} does not exist")
    return found
