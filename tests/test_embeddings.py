"""The embedding cache: each distinct text embedded once, shared on disk, safe against partial writes."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest

from membench.embedding.cache import EmbeddingCache, cache_from_context, flush_shared, shared_cache


class CountingEncoder:
    """A stand-in model: text -> [len, number of 'a', 1], counting calls and texts."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def __call__(self, batch):
        self.calls.append(list(batch))
        return np.array([[len(t), t.count("a"), 1.0] for t in batch], dtype=np.float64)


def no_model(batch):
    raise AssertionError(f"the model was asked to embed {batch!r}")


def test_repeated_text_is_embedded_once(tmp_path):
    model = CountingEncoder()
    cache = EmbeddingCache(tmp_path / "emb", encoder=model, model_id="m")
    first = cache.encode(["apple", "banana", "apple"])
    assert (cache.misses, cache.hits, cache.model_calls) == (2, 1, 1)
    cache.encode(["banana", "cherry"])
    assert (cache.misses, cache.hits, cache.model_calls) == (3, 2, 2)
    again = cache.encode(["apple", "banana", "cherry"])
    assert (cache.misses, cache.hits, cache.model_calls) == (3, 5, 2)
    assert model.calls == [["apple", "banana"], ["cherry"]]
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[0], first[2])


def test_vectors_are_normalised_float32():
    cache = EmbeddingCache(None, encoder=lambda b: np.array([[3.0, 4.0], [0.0, 0.0]][: len(b)]), model_id="m")
    out = cache.encode(["x", "y"])
    assert out.dtype == np.float32 and out.shape == (2, 2)
    np.testing.assert_allclose(out[0], [0.6, 0.8], rtol=1e-6)
    np.testing.assert_array_equal(out[1], [0.0, 0.0])  # a zero vector stays zero, no NaN
    assert cache.encode([]).shape == (0, 2)


def test_cache_persists_across_instances_and_loads_the_model_lazily(tmp_path):
    cache = EmbeddingCache(tmp_path, encoder=CountingEncoder(), model_id="m")
    expected = cache.encode(["apple", "banana"])
    cache.flush()
    assert len(list(tmp_path.glob("shard-*.npy"))) == 1
    reopened = EmbeddingCache(tmp_path, model_path="/no/such/model", model_id="m")  # loading it would fail
    np.testing.assert_array_equal(reopened.encode(["banana", "apple"]), expected[::-1])
    assert (reopened.misses, reopened.hits, reopened.model_calls) == (0, 2, 0)
    assert reopened._encoder is None and "apple" in reopened and len(reopened) == 2
    other_model = EmbeddingCache(tmp_path, encoder=CountingEncoder(), model_id="another")
    other_model.encode(["apple"])
    assert other_model.misses == 1  # the model id is part of the key


def test_rows_from_shards_and_new_blocks_come_back_in_the_order_asked(tmp_path):
    """encode gathers each text's row from wherever it lives (two shards on disk, a block embedded now), in the order
    of the texts asked, repeats included: the stand-in model's [len, count of 'a', 1], normalised, row by row."""
    for batch in (["a", "bb"], ["ccc", "aaaa"]):
        writer = EmbeddingCache(tmp_path, encoder=CountingEncoder(), model_id="m")
        writer.encode(batch)
        writer.flush()
    cache = EmbeddingCache(tmp_path, encoder=CountingEncoder(), model_id="m")
    asked = ["aaaa", "new a", "a", "bb", "aaaa", "ccc", "new a"]
    out = cache.encode(asked)
    assert (cache.hits, cache.misses) == (6, 1) and len(cache._blocks) == 3
    raw = np.array([[len(t), t.count("a"), 1.0] for t in asked])
    np.testing.assert_array_equal(out, (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32))
    assert out.dtype == np.float32 and out.flags.c_contiguous


def test_partial_writes_do_not_corrupt_the_cache(tmp_path):
    cache = EmbeddingCache(tmp_path, encoder=CountingEncoder(), model_id="m")
    cache.encode(["apple"])
    cache.flush()
    (tmp_path / ".tmp-crashed.npy").write_bytes(b"\x93NUMPY half a shard")  # a write cut short
    (tmp_path / "shard-garbage.npy").write_bytes(b"not numpy at all")
    reopened = EmbeddingCache(tmp_path, encoder=no_model, model_id="m")
    assert reopened.encode(["apple"]).shape == (1, 3) and reopened.hits == 1


def test_unflushed_embeddings_are_lost_but_nothing_else(tmp_path):
    cache = EmbeddingCache(tmp_path, encoder=CountingEncoder(), model_id="m", flush_every=2)
    cache.encode(["a", "b"])  # reaches flush_every: written
    cache.encode(["c"])  # pending only, as if the process died now
    reopened = EmbeddingCache(tmp_path, encoder=CountingEncoder(), model_id="m")
    reopened.encode(["a", "b", "c"])
    assert (reopened.hits, reopened.misses) == (2, 1)


def test_two_writers_share_a_directory_and_shards_are_merged(tmp_path):
    one = EmbeddingCache(tmp_path, encoder=CountingEncoder(), model_id="m", flush_every=1, max_shards=3)
    two = EmbeddingCache(tmp_path, encoder=CountingEncoder(), model_id="m", flush_every=1, max_shards=3)
    for text in ("a", "b", "c"):
        one.encode([text])
    for text in ("c", "d"):
        two.encode([text])
    assert len(list(tmp_path.glob("shard-*.npy"))) <= 3
    reader = EmbeddingCache(tmp_path, encoder=no_model, model_id="m")
    assert reader.encode(["a", "b", "c", "d"]).shape == (4, 3) and reader.hits == 4


def test_shared_caches_and_context():
    assert shared_cache(None, "x") is shared_cache(None, "x")
    mine = EmbeddingCache(None, encoder=CountingEncoder())
    assert cache_from_context({"embedding_cache": mine}) is mine
    assert cache_from_context(None) is shared_cache()


def test_context_directory_gives_a_shared_persistent_cache(tmp_path):
    cache = cache_from_context({"embedding_cache_dir": tmp_path}, model_path="fake-model")
    assert cache is shared_cache(tmp_path, "fake-model") and cache.model_id == "fake-model"
    cache._encoder = CountingEncoder()
    cache.encode(["x"])
    flush_shared()
    assert len(list(tmp_path.glob("shard-*.npy"))) == 1


@pytest.mark.slow
def test_real_model_embeds_each_distinct_text_once(tmp_path):
    from sentence_transformers import SentenceTransformer

    from membench.embedding.cache import default_model_path

    cache = EmbeddingCache(tmp_path)
    out = cache.encode(["I walked my dog.", "Quarterly taxes are due.", "I walked my dog."])
    assert out.shape == (3, 384) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    assert (cache.model_calls, cache.misses, cache.hits) == (1, 2, 1)
    cache.encode(["Quarterly taxes are due.", "I walked my dog."])
    assert cache.model_calls == 1
    direct = SentenceTransformer(default_model_path(), device="cpu").encode(["I walked my dog."])[0]
    np.testing.assert_allclose(out[0], direct / np.linalg.norm(direct), atol=1e-5)
