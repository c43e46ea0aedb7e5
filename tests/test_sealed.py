"""Sealed mode (membench.memory.sealed.parent): a memory system in a process of its own reads the session logs it serves
and nothing of the gold; its run is the run it makes unsealed, and it does not change when only the gold does."""

from __future__ import annotations

import random

import pytest

from conftest import locomo_slice
from membench.benchmarks.registry import benchmark
from membench.memory.run import run_memory
from membench.memory.sealed.seal import Seal
from membench.memory.sealed.parent import SealedSystem
from membench.runs.registry import resolve
from membench.runs.request import RunRequest
from membench.stages.rank_memory import seal_for
from test_gold_permutation import build, write_permuted

pytestmark = pytest.mark.data


def test_the_most_specific_folder_decides(tmp_path):
    seal = Seal((str(tmp_path), str(tmp_path / "results" / "d" / "sessions")),
                (str(tmp_path / "results"), str(tmp_path / "data.json")))
    assert seal.allows(tmp_path / "cache" / "store.db")
    assert seal.allows(tmp_path / "results" / "d" / "sessions" / "s1" / "events.jsonl")
    assert not seal.allows(tmp_path / "results" / "d" / "maps" / "item_map.parquet")
    assert not seal.allows(tmp_path / "results" / "d" / "sessions-copy")  # a sibling whose name starts alike
    assert not seal.allows(tmp_path / "data.json")
    assert not seal.allows("/nowhere/listed")


def sealed_run(folder, store, spec, params=None, gold=()):
    cls = resolve(spec)
    request = RunRequest("sealed", spec, params or {}, benchmark("locomo"), 50, folder)
    system = SealedSystem("sealed", cls, params or {}, seal_for(request, cls, store, gold))
    try:
        return run_memory(benchmark("locomo"), folder, system, 50, store, name="sealed")
    finally:
        system.shutdown()


@pytest.fixture(scope="module")
def locomo_pair(locomo_dir, tmp_path_factory):
    """LoCoMo conv-26 + conv-30 as published and with its gold permuted (tests/test_gold_permutation.py)."""
    tmp = tmp_path_factory.mktemp("sealed")
    source = locomo_slice(locomo_dir, tmp / "slice")
    permuted = write_permuted("locomo", source, tmp / "perm_src", random.Random(7))
    return source, build("locomo", source, tmp / "orig"), build("locomo", permuted, tmp / "perm")


def test_a_sealed_run_is_the_unsealed_run_and_ignores_the_gold(locomo_pair, tmp_path):
    _, original, permuted = locomo_pair
    assert (original / "qrels.parquet").read_bytes() != (permuted / "qrels.parquet").read_bytes()
    plain, _ = run_memory(benchmark("locomo"), original, resolve("session-log")(), 50, tmp_path / "plain")
    sealed, acc = sealed_run(original, tmp_path / "a", "session-log")
    moved, _ = sealed_run(permuted, tmp_path / "b", "session-log")
    assert len(plain) == 15_200 and acc.sessions_in_stores == 38  # 304 questions x 50 turns; 38 sessions
    assert sealed.equals(plain) and moved.equals(sealed)


def test_a_system_that_opens_the_gold_fails_only_when_sealed(locomo_pair, tmp_path):
    source, original, _ = locomo_pair
    peeks = resolve("untrusted_plugins:PeeksAtTheMaps")
    run, _ = run_memory(benchmark("locomo"), original, peeks(), 50, tmp_path / "open")  # unsealed, nothing stops it
    assert len(run) == 15_200
    maps = (original / "maps" / "item_map.parquet").resolve()
    with pytest.raises(PermissionError, match=f"sealed run 'sealed' may not read {maps}"):
        sealed_run(original, tmp_path / "sealed", "untrusted_plugins:PeeksAtTheMaps")
    published = (source / "locomo10.json").resolve()
    with pytest.raises(PermissionError, match=f"may not read {published}"):
        sealed_run(original, tmp_path / "bench", "untrusted_plugins:ReadsTheBenchmarkFile",
                   {"path": str(published)}, gold=[source])
