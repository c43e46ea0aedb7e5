"""Sealed mode (membench.memory.sealed.parent): a memory system in a process of its own reads the session logs it serves
and nothing of the gold; its run is the run it makes unsealed, and it does not change when only the gold does."""

from __future__ import annotations

import json
import random
import time

import pandas as pd
import pytest

from conftest import locomo_slice
from membench.benchmarks.registry import benchmark
from membench.memory.run import run_memory
from membench.memory.sealed import landlock
from membench.memory.sealed.process import SealUnavailable
from membench.memory.sealed.seal import Seal
from membench.memory.sealed.parent import SealedSystem
from membench.runs.registry import resolve
from membench.runs.request import RunRequest
from membench.runs.sealing import open_adapter, seal_for
from membench.stages.rank import rank_dataset
from test_gold_permutation import build, write_permuted
from untrusted_plugins import ROUTES

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


def sealed_run(folder, store, spec, params=None, gold=(), kind="landlock", timeout=None):
    cls = resolve(spec)
    request = RunRequest("sealed", spec, params or {}, benchmark("locomo"), 50, folder)
    system = SealedSystem("sealed", cls, params or {}, seal_for(request, cls, store, gold, kind), timeout=timeout)
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


def routes_tried(folder, store, target, outside, kind=None):
    """What TriesEveryRoute's seven routes got (tests/untrusted_plugins.py), in a run under `kind` of seal or none."""
    spec, params = "untrusted_plugins:TriesEveryRoute", {"target": str(target), "outside": str(outside)}
    if kind:
        sealed_run(folder, store, spec, params, kind=kind)
    else:
        run_memory(benchmark("locomo"), folder, resolve(spec)(**params), 50, store)
    notes = [json.loads(path.read_text()) for path in sorted(store.rglob("routes.json"))]
    assert len(notes) == 2 and notes[0] == notes[1]  # one store per conversation, each tried on its first search
    return notes[0]


def test_a_hostile_system_reads_the_gold_by_no_route_under_the_kernel_seal(locomo_pair, tmp_path):
    """Six ways to read qrels.parquet and a write outside the store: all work unsealed (so this test can fail), none
    under Landlock, the C and subprocess routes included; the audit hook alone stops only the two Python opens."""
    _, original, _ = locomo_pair
    target = (original / "qrels.parquet").resolve()
    size = target.stat().st_size
    assert size > 1000
    read = {"open": size, "os_open": size, "subprocess": size, "os_system": size, "ctypes": size,
            "write_outside": len("written from a sealed run")}
    unsealed = routes_tried(original, tmp_path / "open", target, tmp_path / "outside-open.txt")
    assert unsealed.keys() == set(ROUTES)
    assert {route: got.get("bytes") for route, got in unsealed.items() if route != "pyarrow"} == read
    assert unsealed["pyarrow"]["bytes"] > 0

    sealed = routes_tried(original, tmp_path / "sealed", target, tmp_path / "outside-sealed.txt", "landlock")
    assert {route for route, got in sealed.items() if "error" in got} == set(ROUTES), sealed
    assert "may not read" in sealed["open"]["error"] and "may not read" in sealed["os_open"]["error"]
    assert "Permission denied" in sealed["pyarrow"]["error"] and "[Errno 13]" in sealed["ctypes"]["error"]
    assert "returned non-zero exit status 1" in sealed["subprocess"]["error"]
    assert not (tmp_path / "outside-sealed.txt").exists()

    hooked = routes_tried(original, tmp_path / "hooked", target, tmp_path / "outside-hooked.txt", "audit-hook")
    assert {route for route, got in hooked.items() if "error" in got} == {"open", "os_open"}
    assert hooked["ctypes"]["bytes"] == hooked["subprocess"]["bytes"] == size  # why the kernel seal is the default
    assert (tmp_path / "outside-hooked.txt").exists()  # the hook checks reads only


def test_without_landlock_a_sealed_run_stops_and_names_the_kernel_requirement(monkeypatch, tmp_path):
    monkeypatch.setattr(landlock, "abi", lambda: (0, "landlock_create_ruleset: Function not implemented"))
    cls = resolve("session-log")
    seal = Seal((str(tmp_path),), (), (str(tmp_path),), kind="landlock")
    with pytest.raises(SealUnavailable, match=r"Function not implemented\. It needs Linux 5\.13 or later with "
                       r"Landlock enabled .* set memory_sealed: audit-hook"):
        SealedSystem("sealed", cls, {}, seal)


def test_a_third_party_adapter_runs_sealed_and_cannot_read_the_gold(locomo_pair):
    """A `module:Class` adapter ranks in a sealed process of its own: membench's BM25 loaded that way ranks as the
    built-in one, and an adapter that puts the gold first when it can read it cheats unsealed and cannot sealed."""
    _, original, _ = locomo_pair
    record = benchmark("locomo")

    def ranked(spec, params, sealed):
        adapter = open_adapter(RunRequest("third", spec, params, record, 50, original), sealed)
        try:
            return rank_dataset(record, original, adapter, 50, name="third"), getattr(adapter, "label", None)
        finally:
            getattr(adapter, "shutdown", lambda: None)()

    def first_is_gold(run):
        qrels = pd.read_parquet(original / "qrels.parquet")
        top = run[run["rank"] == 1]
        return top.merge(qrels, on=["question_id", "item_id", "granularity"]).question_id.nunique()

    plain, label = ranked("bm25", {}, True)
    assert label is None  # a built-in adapter is membench's own code and is not sealed
    own, label = ranked("membench.adapters.bm25:BM25Adapter", {}, True)
    assert label.startswith("landlock (ABI ") and own.equals(plain)
    cheat = {"folder": str(original)}
    cheated, _ = ranked("untrusted_plugins:CheatsWithTheGold", cheat, False)
    sealed, label = ranked("untrusted_plugins:CheatsWithTheGold", cheat, True)
    assert first_is_gold(cheated) > first_is_gold(plain) + 50  # reading the gold is worth it, so the test can fail
    assert sealed.equals(plain) and label.startswith("landlock")


def test_a_sealed_system_that_hangs_is_ended_after_memory_call_timeout(locomo_pair, tmp_path):
    _, original, _ = locomo_pair
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"^sealed run 'sealed': the system NeverAnswers did not answer 'search' "
                       r"within 2 s \(memory_call_timeout\); its process was ended$"):
        sealed_run(original, tmp_path / "store", "untrusted_plugins:NeverAnswers", timeout=2)
    assert time.monotonic() - start < 30
