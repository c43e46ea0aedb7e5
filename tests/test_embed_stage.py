"""The embed stage: the texts each run needs found ahead, embedded once in shards, read by rank jobs with no
model call; vectors that do not depend on batching; sharded rank jobs that merge into the unsharded run."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pandas as pd
import pytest

from membench.benchmarks.registry import benchmark
from membench.embedding import numerics
from membench.runs.registry import load_adapter
from membench.embedding.cache import EmbeddingCache, default_model_path
from membench.embedding.encoder import length_batches, load_model, padfree_encoder
from membench.io import atomic_write_parquet
from membench.stages import embed as embed_shards
from membench.stages import embed_texts as embed
from membench.datasets.run_files import write_trec
from membench.stages.rank import granularities_for, merge_parts, part_of, rank_dataset

pytestmark = pytest.mark.data


def test_length_batches_group_equal_lengths_and_cut_at_batch_size():
    lengths = [5, 3, 5, 5, 3, 7, 5]
    assert length_batches(lengths, 2) == [[1, 4], [0, 2], [3, 6], [5]]
    assert sorted(i for b in length_batches(lengths, 64) for i in b) == list(range(7))


def test_part_of_cuts_contiguous_near_equal_slices():
    items = list(range(10))
    parts = [part_of(items, p, 3) for p in range(3)]
    assert parts == [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]
    assert part_of(items, 0, 1) == items and part_of([1], 1, 2) == [1] and part_of([1], 0, 2) == []


def test_shards_partition_the_texts_longest_first_to_the_least_loaded():
    texts = ["a" * n for n in (6, 10, 8, 7, 9)]
    # 10 -> 0; 9 -> 1; 8 -> 1 (9 < 10); 7 -> 0 (10 < 17); 6 -> 0 (17 = 17, the lower index)
    assert embed_shards.shard_owners(texts, 2) == [0, 0, 1, 0, 1]
    # both capped at 1,200 (a tie, broken by the text: "x..." first), then "z" to the lower index of two equal loads
    assert embed_shards.shard_owners(["y" * 1300, "x" * 5000, "z"], 2) == [1, 0, 0]
    texts = [f"text number {i} " * (i % 37) for i in range(500)]
    owners = embed_shards.shard_owners(texts, 4)
    loads = np.bincount(owners, weights=[min(len(t), embed_shards.COST_CAP) for t in texts], minlength=4)
    assert len(owners) == 500 and loads.max() - loads.min() <= max(len(t) for t in texts)
    assert dict(zip(texts, owners)) == dict(zip(texts[::-1], embed_shards.shard_owners(texts[::-1], 4)))


@pytest.fixture(scope="module")
def minilm():
    return load_model(default_model_path(), threads=1)


def test_a_vector_does_not_depend_on_its_batch_or_thread_count(parsed, minilm):
    """Pad-free batches plus the pinned numeric profile (membench.embedding.numerics: ATen's AVX2 kernels, MKL's AVX2 branch in
    strict reproducible mode, oneDNN at most AVX2) give every text the bytes it gets when encoded alone, with one
    thread or two: the ground for runs that are byte-identical however the texts are sharded, ordered, batched or
    shared between jobs. No library promises this across matrix shapes in general (with their defaults the vectors
    moved by ~1e-7 with the batch on an Intel Xeon and with the thread count on an AMD EPYC), so exact equality
    here is the property the cache key relies on, checked on the machine at hand; a CPU without AVX2 and FMA cannot
    run the profile, is keyed as unpinned and promised nothing."""
    if not numerics.is_pinned():
        pytest.skip(f"this process runs the unpinned profile {numerics.profile_name()}: no batch independence claimed")
    import torch

    texts = list(dict.fromkeys(t["text"] for t in parsed["locomo"].turns))[:60] + ["x " * 400]  # mixed lengths, one truncated at 256 pieces
    encode = padfree_encoder(minilm, batch_size=16)
    together = encode(texts)
    alone = np.stack([encode([t])[0] for t in texts])
    reversed_order = encode(texts[::-1])[::-1]
    torch.set_num_threads(2)
    try:
        two_threads = padfree_encoder(minilm, batch_size=7)(texts)
    finally:
        torch.set_num_threads(1)
    assert np.array_equal(together, alone) and np.array_equal(together, reversed_order)
    assert np.array_equal(together, two_threads)


def test_collect_counts_distinct_texts_per_run(ingested, tmp_path):
    runs = [{"name": n, "spec": n, "params": {}, "facts": None} for n in ("dense", "hybrid", "state-aware", "bm25")]
    table = embed.collect(benchmark("procedural"), ingested["procedural"], runs, tmp_path / "texts.parquet",
                          tmp_path / "texts.json")
    summary = json.loads((tmp_path / "texts.json").read_text())
    # dense and hybrid embed the same 336 trajectory texts and 39 distinct query texts (medium_12 and hard_14
    # share theirs); state-aware embeds its own 336 "Task: ...\nSteps: ..." texts and the same queries.
    assert summary["runs"]["dense"] == {"model": "sentence-transformers/all-MiniLM-L6-v2", "distinct": 375,
                                        "occurrences": 40 * 336 + 40}
    assert summary["runs"]["hybrid"]["distinct"] == 375 and summary["runs"]["state-aware"]["distinct"] == 375
    assert summary["runs"]["bm25"] == {"distinct": 0, "occurrences": 0}
    assert summary["distinct"] == len(table) == 375 + 336 and table.text.is_unique
    assert pd.read_parquet(tmp_path / "texts.parquet").equals(table)


def test_shards_embed_once_and_rank_jobs_load_no_model(ingested, tmp_path, minilm):
    # action-only: 359 distinct texts, 27k word pieces (state-aware's 375 are 85k: the same test, 3x the embedding)
    runs = [{"name": "action-only", "spec": "action-only", "params": {}, "facts": None}]
    embed.collect(benchmark("procedural"), ingested["procedural"], runs, tmp_path / "texts.parquet", tmp_path / "texts.json")
    cache_dir = tmp_path / "cache"
    manifests = [embed_shards.embed_shard(tmp_path / "texts.parquet", i, 3, cache_dir, tmp_path / f"shard-{i}.json",
                                   {"threads": 1}) for i in range(3)]
    counts = [m["models"]["sentence-transformers/all-MiniLM-L6-v2"] for m in manifests]
    assert sum(c["texts"] for c in counts) == sum(c["embedded"] for c in counts) == 359
    again = embed_shards.embed_shard(tmp_path / "texts.parquet", 0, 3, cache_dir, tmp_path / "again.json")
    assert again["models"]["sentence-transformers/all-MiniLM-L6-v2"]["embedded"] == 0  # a rerun costs nothing

    adapter = load_adapter("action-only", {}, {"embedding_cache_dir": cache_dir})
    rank_dataset(benchmark("procedural"), ingested["procedural"], adapter, depth=10)
    cache = adapter.embedder()
    assert cache.misses == 0 and cache.model_calls == 0 and cache.hits >= 359


def test_a_killed_shard_resumes_from_its_last_chunk(parsed, tmp_path, minilm, monkeypatch):
    """A shard writes its vectors chunk by chunk; a job killed in its second chunk keeps the first, and the
    rerun embeds only the rest, to the same vectors a run without the failure gives."""
    texts = list(dict.fromkeys(t["text"] for t in parsed["locomo"].turns))[:25]
    atomic_write_parquet(pd.DataFrame({"model_path": "", "text": texts}).astype(embed.TEXT_COLUMNS),
                         tmp_path / "texts.parquet")
    monkeypatch.setattr(embed_shards, "CHUNK", 10)
    real, calls = padfree_encoder(minilm), []

    def dies_in_second_chunk(batch):
        calls.append(len(batch))
        if len(calls) == 2:
            raise KeyboardInterrupt("killed")
        return real(batch)

    monkeypatch.setattr(EmbeddingCache, "_model_encoder", lambda self: dies_in_second_chunk)
    with pytest.raises(KeyboardInterrupt):
        embed_shards.embed_shard(tmp_path / "texts.parquet", 0, 1, tmp_path / "cache", tmp_path / "shard.json")
    assert calls == [10, 10] and not (tmp_path / "shard.json").exists()
    resumed = embed_shards.embed_shard(tmp_path / "texts.parquet", 0, 1, tmp_path / "cache", tmp_path / "shard.json")
    counts = resumed["models"]["sentence-transformers/all-MiniLM-L6-v2"]
    assert (counts["texts"], counts["embedded"], counts["cached"]) == (25, 15, 10) and calls[2:] == [10, 5]
    fresh = embed_shards.embed_shard(tmp_path / "texts.parquet", 0, 1, tmp_path / "fresh", tmp_path / "fresh.json")
    assert fresh["models"]["sentence-transformers/all-MiniLM-L6-v2"]["embedded"] == 25
    one, two = EmbeddingCache(tmp_path / "cache"), EmbeddingCache(tmp_path / "fresh")
    assert np.array_equal(one.encode(texts), two.encode(texts))


@pytest.mark.parametrize("kind, parts", [("procedural", 3), ("longmemeval", 2), ("locomo", 4)])
def test_sharded_rank_merges_to_the_unsharded_run_byte_for_byte(ingested, tmp_path, kind, parts):
    folder = ingested[kind]
    adapter = load_adapter("bm25-time")
    whole = rank_dataset(benchmark(kind), folder, adapter, depth=20)
    pieces = [rank_dataset(benchmark(kind), folder, adapter, 20, None, p, parts) for p in range(parts)]
    assert all(len(p) for p in pieces)
    merged = merge_parts(benchmark(kind), adapter, pieces)
    files = []
    for name, run in (("whole", whole), ("merged", merged)):
        atomic_write_parquet(run, tmp_path / f"{name}.parquet")
        write_trec(run, tmp_path / f"{name}.trec", "bm25-time")
        files.append(((tmp_path / f"{name}.parquet").read_bytes(), (tmp_path / f"{name}.trec").read_bytes()))
    assert files[0] == files[1]
    assert len(granularities_for(benchmark(kind), adapter)) == (2 if kind == "longmemeval" else 1)
