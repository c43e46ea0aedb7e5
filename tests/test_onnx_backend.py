"""The opt-in ONNX Runtime backend against the torch reference on real LoCoMo text: cosine >= 0.999 for every
text and the same top 10 for the questions of one conversation; its vectors never share cache keys with torch's."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="the onnx extra is not installed (pip install -e '.[onnx]')")

from membench.embeddings import EmbeddingCache, default_model_path, model_key  # noqa: E402
from membench.encoder import load_encoder  # noqa: E402
from membench.sessions.reader import SessionStore  # noqa: E402

pytestmark = [pytest.mark.data, pytest.mark.slow]


def test_onnx_vectors_match_torch_and_keep_the_top_10(ingested, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMBENCH_ONNX_DIR", str(tmp_path / "onnx"))
    store = SessionStore(ingested["locomo"])
    queries = [(q, h) for q, h in store.queries() if h == store.haystack_keys()[0]]
    documents = store.haystack(queries[0][1]).documents("turn")
    texts = [d.text for d in documents] + [q.text for q, _ in queries]
    torch_vectors = EmbeddingCache(None, encoder=load_encoder(default_model_path(), threads=1)).encode(texts)
    onnx_vectors = EmbeddingCache(None, encoder=load_encoder(default_model_path(), threads=1,
                                                             backend="onnx")).encode(texts)
    assert list((tmp_path / "onnx").glob("*.onnx")), "the exported transformer is kept for the next run"
    cosines = (torch_vectors * onnx_vectors).sum(axis=1)
    assert cosines.min() >= 0.999, cosines.min()
    docs = len(documents)
    same = 0
    for i in range(len(queries)):
        top = [np.argsort(-(v[:docs] @ v[docs + i]), kind="stable")[:10] for v in (torch_vectors, onnx_vectors)]
        same += list(top[0]) == list(top[1])
    assert len(queries) > 100 and same == len(queries), f"{same} of {len(queries)} top-10 lists equal"


def test_backends_and_devices_have_their_own_cache_keys():
    assert model_key(None) == "sentence-transformers/all-MiniLM-L6-v2"
    assert model_key(None, "onnx") == "sentence-transformers/all-MiniLM-L6-v2@onnx"
    assert model_key("/models/my-encoder", "torch", "cpu") == "my-encoder"
    assert EmbeddingCache(None, backend="onnx").key("x") != EmbeddingCache(None).key("x")
