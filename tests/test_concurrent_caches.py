"""Several processes write the shared caches at once (parallel local jobs, or SLURM jobs on one shared
filesystem): every entry must end up present exactly once and readable, nothing torn, nothing lost.
(In the embedding cache "once" means one key -> one vector: two writers that embed the same text may both
store a row, a harmless duplicate by design, but a merge must never drop a row another writer wrote.)"""

from __future__ import annotations

import hashlib
import json
import multiprocessing

import numpy as np

from membench.embedding.cache import EmbeddingCache
from membench.llm.cache import CallCache, make_key

WRITERS = 4
PER_WRITER = 60
SHARED_TEXTS = [f"a text every writer embeds #{i}" for i in range(10)]


def call_key(writer: int, i: int) -> str:
    return make_key("m", [{"role": "user", "content": f"writer {writer} prompt {i}"}])


def append_calls(path: str, writer: int, barrier) -> None:
    cache = CallCache(path)
    barrier.wait()
    for i in range(PER_WRITER):
        cache.append({"key": call_key(writer, i), "status": "ok", "response_text": f"answer {writer}/{i} " + "x" * i})
    cache.close()


def fake_vector(text: str) -> np.ndarray:
    """A deterministic 8-dim vector per text, so a reader can check every stored row."""
    return np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.uint8)[:8].astype(np.float32) + 1


def encode(batch: list[str]) -> np.ndarray:
    return np.stack([fake_vector(t) for t in batch])


def writer_texts(writer: int) -> list[str]:
    return [f"writer {writer} text {i}" for i in range(PER_WRITER)]


def embed_texts(path: str, writer: int, barrier) -> None:
    # Small shards and a low merge threshold: writers flush and merge (rewrite + delete shards) concurrently.
    cache = EmbeddingCache(path, model_id="fake", encoder=encode, flush_every=5, max_shards=3)
    barrier.wait()
    texts = writer_texts(writer)
    for start in range(0, len(texts), 5):
        cache.encode(texts[start:start + 5] + SHARED_TEXTS[start // 5 % 10:][:1])
    cache.flush()


def run_writers(target, path) -> None:
    ctx = multiprocessing.get_context("fork")  # separate processes, each with its own cache object
    barrier = ctx.Barrier(WRITERS)
    procs = [ctx.Process(target=target, args=(str(path), w, barrier)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * WRITERS


def test_call_cache_concurrent_appends(tmp_path):
    path = tmp_path / "llm-calls.jsonl"
    path.write_bytes(b'{"key": "half-written by a killed run"')  # every writer must start on a fresh line
    run_writers(append_calls, path)

    lines = [line for line in path.read_bytes().split(b"\n")[1:] if line.strip()]
    records = [json.loads(line) for line in lines]  # every line whole: no interleaved writes
    keys = [r["key"] for r in records]
    expected = {call_key(w, i): f"answer {w}/{i} " + "x" * i for w in range(WRITERS) for i in range(PER_WRITER)}
    assert len(keys) == len(set(keys)) == WRITERS * PER_WRITER and set(keys) == set(expected)
    reread = CallCache(path)
    assert len(reread) == WRITERS * PER_WRITER and reread.skipped_lines == 1
    assert all(reread.get(k)["response_text"] == text for k, text in expected.items())


def test_embedding_cache_concurrent_flushes_and_merges(tmp_path):
    run_writers(embed_texts, tmp_path)

    assert not list(tmp_path.glob(".tmp-*"))

    def no_model(batch):
        raise AssertionError(f"{len(batch)} texts missing from the cache, e.g. {batch[0]!r}")
    reader = EmbeddingCache(tmp_path, model_id="fake", encoder=no_model)
    texts = [t for w in range(WRITERS) for t in writer_texts(w)] + SHARED_TEXTS
    assert len(reader) == len(texts) == WRITERS * PER_WRITER + len(SHARED_TEXTS)
    got = reader.encode(texts)
    want = encode(texts)
    np.testing.assert_allclose(got, want / np.linalg.norm(want, axis=1, keepdims=True), rtol=1e-6)

