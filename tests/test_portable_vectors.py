"""`embedding.precision: float64` gives the same vector bits whatever kernels computed them (issue 23: rankings that
do not depend on which x86-64 CPU computed the vectors).

A second CPU is not at hand, but the kernels are what differ between CPUs: torch's AVX2 vs AVX-512 (or native)
kernels, MKL's pinned AVX2 branch vs its own choice, oneDNN's ISA cap. Two processes embed the same real texts, one
on the pinned AVX2 profile with one thread and batches of 64, the other on the machine's native kernels with two
threads and batches of 7. In float64 (rounded to float32 once) their vectors must be the same bits and share one
cache key; in float32 they are keyed apart (pinned vs unpinned), since their bits may differ (on the AMD EPYC of
bench/RESULTS.md they differ in 137 of 200 texts, by up to 1.9e-7). Exact equality is the property claimed, not a
library promise: a float64 value within ~1e-16 of a float32 rounding boundary would round apart (about 2 in a
billion values; these 81 x 384 are ~3e4), and the outcome is fixed per machine, not random per run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from membench.embedding import numerics
from membench.embedding.encoder import load_model

pytestmark = [pytest.mark.data]

NATIVE = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "AUTO", "ONEDNN_MAX_CPU_ISA": "ALL",
          "OMP_NUM_THREADS": "2"}
EMBED = """
import json, sys
import numpy as np
from membench.embedding.cache import EmbeddingCache
texts, out, batch, threads = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tags = {}
for precision in ("float64", "float32"):
    cache = EmbeddingCache(None, batch_size=batch, precision=precision, threads=threads)
    np.save(f"{out}-{precision}.npy", cache.encode(texts))
    tags[precision] = cache.numeric_tag
print(json.dumps(tags))
"""


def embed_in_subprocess(tmp: Path, texts_file: Path, name: str, env: dict[str, str], batch: int,
                        threads: int) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Vectors and cache tags per precision, from a fresh process (the variables act when torch loads)."""
    done = subprocess.run([sys.executable, "-c", EMBED, str(texts_file), str(tmp / name), str(batch), str(threads)],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    tags = json.loads(done.stdout.strip().splitlines()[-1])
    return {p: np.load(tmp / f"{name}-{p}.npy") for p in tags}, tags


@pytest.fixture(scope="module")
def texts_file(parsed, tmp_path_factory) -> Path:
    """80 distinct LoCoMo turns of mixed lengths and one text cut at 256 word pieces."""
    texts = list(dict.fromkeys(t["text"] for t in parsed["locomo"].turns))[:80] + ["memory " * 300]
    path = tmp_path_factory.mktemp("portable") / "texts.json"
    path.write_text(json.dumps(texts), encoding="utf-8")
    return path


def test_float64_vectors_are_the_same_bits_on_other_kernels(texts_file, tmp_path):
    pinned, pinned_tags = embed_in_subprocess(tmp_path, texts_file, "pinned", {**numerics.PINNED,
                                                                               "OMP_NUM_THREADS": "1"}, 64, 1)
    native, native_tags = embed_in_subprocess(tmp_path, texts_file, "native", NATIVE, 7, 2)
    a, b = pinned["float64"], native["float64"]
    assert a.dtype == b.dtype == np.float32 and a.shape == (81, 384)
    assert np.array_equal(a, b)
    assert pinned_tags["float64"] == native_tags["float64"] and pinned_tags["float64"].endswith("/float64")
    # float32 may differ in its last bits between the two (it does here on AVX-512 CPUs), so it is keyed apart;
    # it is the same model: within float32 rounding of the float64 vectors.
    assert pinned_tags["float32"].endswith(numerics.profile_name(numerics.PINNED))
    assert native_tags["float32"].split("/")[1] == "unpinned"
    assert np.abs(a - pinned["float32"]).max() < 1e-6


def test_float64_needs_the_torch_backend_and_a_known_precision():
    with pytest.raises(ValueError, match="float64 runs on the torch backend only"):
        load_model("unused", backend="onnx", precision="float64")
    with pytest.raises(ValueError, match="precision 'float16' is not one of float32, float64"):
        load_model("unused", precision="float16")
