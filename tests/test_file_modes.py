"""Outputs respect the umask like any other tool's (a group sharing a project folder can read them);
mkstemp's 0600 must not leak into results."""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager

import pandas as pd
import pytest

from membench.fetch.download import materialize
from membench.io import atomic_path, atomic_write_parquet, atomic_write_text, temp_beside

LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"


@contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask, file_mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_writes_follow_the_umask(tmp_path, mask, file_mode):
    with umask(mask):
        atomic_write_text(tmp_path / "report.md", "# report\n")
        atomic_write_parquet(pd.DataFrame({"a": [1, 2]}), tmp_path / "results" / "summary.parquet")
        with atomic_path(tmp_path / "run.jsonl") as tmp, open(tmp, "w", encoding="utf-8") as fh:
            fh.write("{}\n")
    assert mode(tmp_path / "report.md") == file_mode
    assert mode(tmp_path / "results" / "summary.parquet") == file_mode
    assert mode(tmp_path / "run.jsonl") == file_mode
    assert pd.read_parquet(tmp_path / "results" / "summary.parquet").a.tolist() == [1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md", "results", "run.jsonl"]  # no temp left


def test_temp_names_are_unique_and_hidden(tmp_path):
    with umask(0o022):
        made = {temp_beside(tmp_path / "x.parquet") for _ in range(50)}
        folder = temp_beside(tmp_path / "data", ".tmp", directory=True)
    assert len(made) == 50 and all(p.name.startswith(".x.parquet.") and p.suffix == ".part" for p in made)
    assert folder.is_dir() and mode(folder) == 0o755 and folder.name.startswith(".data.")


def test_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "out.txt") as tmp:
            tmp.write_text("half")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_fetched_dataset_is_group_readable(tmp_path, locomo_dir):
    """The download rule's folder and the file fetched into it (here from a file:// URL of the real LoCoMo copy)."""
    spec = {"kind": "locomo", "url": (locomo_dir / "locomo10.json").resolve().as_uri(), "sha256": LOCOMO_SHA256}
    with umask(0o022):
        files = materialize("locomo", spec, tmp_path / "resources" / "locomo")
    assert [f.name for f in files] == ["locomo10.json"]
    assert mode(tmp_path / "resources" / "locomo") == 0o755
    assert mode(files[0]) == 0o644
