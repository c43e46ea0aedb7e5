"""A local dataset is tracked by the files its parser reads, and by their bytes (digests kept between starts)."""

from __future__ import annotations

import os
import shutil

import pytest

import example_benchmark
from membench.jobs import source_digests
from membench.benchmarks.registry import benchmark
from membench.io import sha256_file


def test_each_kind_names_the_files_its_parser_reads(tmp_path, locomo_dir, procedural_dir, longmemeval_dir):
    for source in (locomo_dir, procedural_dir, longmemeval_dir):
        shutil.copytree(source, tmp_path / source.name)
        (tmp_path / source.name / "NOTES.txt").write_text("not read by any parser")
    assert benchmark("locomo").files_read(tmp_path / "locomo") == [tmp_path / "locomo" / "locomo10.json"]
    assert benchmark("procedural").files_read(tmp_path / "procedural") == [
        tmp_path / "procedural" / "agentinstruct_trajectories.json", tmp_path / "procedural" / "query_bank.json"]
    lme = tmp_path / "longmemeval" / "longmemeval_s_cleaned_partial_2q.json"
    assert benchmark("longmemeval").files_read(tmp_path / "longmemeval") == [lme]
    assert benchmark("longmemeval").files_read(lme) == [lme]  # a file given as `path` is itself
    # a folder whose files cannot be told (a second .json) is the answer itself: parsing it says what is wrong
    shutil.copy(lme, tmp_path / "longmemeval" / "copy.json")
    assert benchmark("longmemeval").files_read(tmp_path / "longmemeval") == [tmp_path / "longmemeval"]


def test_a_kind_without_a_finder_reads_every_visible_file(tmp_path):
    (tmp_path / "notes.json").write_text("{}")
    (tmp_path / ".notes.json.swp").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "more.json").write_text("{}")
    assert example_benchmark.BENCHMARK.files_read(tmp_path) == [tmp_path / "notes.json", tmp_path / "sub" / "more.json"]


def test_digests_are_kept_between_starts_and_never_outlive_an_edit(tmp_path, monkeypatch, procedural_dir):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(source_digests, "_CACHE", source_digests.JsonCache("sources.json", 1, 1_000))
    files = [tmp_path / "query_bank.json", tmp_path / "missing.json"]
    shutil.copy2(procedural_dir / "query_bank.json", files[0])
    first = source_digests.digests(files)
    assert first == {str(files[0]): "1ca7dcca6cbf778f78175f208c9f4e55a5b80ca57896055fd2a6ec8fa1c02d37"}

    # a later start (a fresh cache object) reads the kept digest: no hashing
    monkeypatch.setattr(source_digests, "_CACHE", source_digests.JsonCache("sources.json", 1, 1_000))
    monkeypatch.setattr(source_digests, "sha256_file", lambda path: pytest.fail(f"{path} hashed again"))
    assert source_digests.digests(files) == first

    # new bytes put back with the old times (as `cp -p` or `rsync -t` do): hashed again, a new digest
    stat = files[0].stat()
    files[0].write_bytes(files[0].read_bytes().replace(b"easy_1", b"easy_9", 1))
    os.utime(files[0], ns=(stat.st_atime_ns, stat.st_mtime_ns))
    monkeypatch.setattr(source_digests, "sha256_file", sha256_file)
    again = source_digests.digests(files)
    assert again[str(files[0])] == sha256_file(files[0]) != first[str(files[0])]
