"""Atomic writes: an output appears whole or not at all, so a failed run leaves nothing a rerun would trust."""

from __future__ import annotations

import hashlib
import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pandas as pd


def temp_beside(path: Path, suffix: str = ".part", directory: bool = False) -> Path:
    """Create a new, uniquely named hidden file (or folder) beside `path` and return its path.

    Unlike mkstemp/mkdtemp (always 0600/0700) it is created with mode 0666/0777 less the umask, like any
    tool's output, so once renamed into place a group-shared results folder stays readable by the group.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(100):
        candidate = path.parent / f".{path.name}.{secrets.token_hex(6)}{suffix}"
        try:
            if directory:
                os.mkdir(candidate, 0o777)
            else:
                os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"no free temporary name beside {path}")


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temp path beside `path`; rename it into place only if the block succeeds."""
    path = Path(path)
    tmp = temp_beside(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_parquet(df: pd.DataFrame, path: Path) -> None:
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)


def read_table(table: str | Path | pd.DataFrame) -> pd.DataFrame:
    """A Parquet file's table, or the table itself when a caller has already read it (a job that hands the same
    files to two consumers reads them once)."""
    return table if isinstance(table, pd.DataFrame) else pd.read_parquet(table)


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
