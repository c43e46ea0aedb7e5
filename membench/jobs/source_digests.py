"""The sha256 of a local dataset's files, so that its parse reruns when their bytes change.

A `path:` dataset is read in place: the parse rule lists the files its parser reads as inputs (editing one in a
folder does not change the folder's time) and their digests as a param, which also catches a file put back with
an older time (`cp -p`, `rsync -t`). Params are compared at every Snakemake start, and hashing LongMemEval-M
(2.7 GB) takes seconds, so digests are kept in the user's cache folder (`sources.json`, membench.jobs.disk_cache),
keyed by the file's path, size, inode, mtime and ctime: writing a file changes its ctime, which no tool sets
back, so a kept digest is never served for other bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

from membench.jobs.disk_cache import JsonCache
from membench.io import sha256_file

_CACHE = JsonCache("sources.json", 1, 1_000)


def _key(path: Path) -> str:
    st = os.stat(path)
    return f"{path.resolve()}|{st.st_size}|{st.st_ino}|{st.st_mtime_ns}|{st.st_ctime_ns}"


def digests(paths: list[Path]) -> dict[str, str]:
    """path -> sha256 of each existing file (a missing one is left to the rule's inputs to report)."""
    out = {}
    for path in map(Path, paths):
        if not path.is_file():
            continue
        key = _key(path)
        digest = _CACHE.get(key)
        if not isinstance(digest, str):
            digest = sha256_file(path)
            _CACHE.put(key, digest)
        out[str(path)] = digest
    _CACHE.save()
    return out
