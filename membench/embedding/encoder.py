"""The sentence encoder behind the embedding cache, made batch-invariant.

Why: a transformer's vector for a text changes in its last bits with the other texts of its batch (padding
changes the matrix shapes, and so the order of float additions). Then a run's scores would depend on which job,
shard or order embedded a text first, and sharding could not promise byte-identical runs. Texts are therefore
grouped by their token count and each group is encoded without any padding: a text's vector then equals the
vector of that text encoded alone (a test checks this on real data), whatever shard, job or batch embeds it.
Grouping by length is also what keeps padding from wasting work, so it costs no speed.

Batching alone does not make a vector batch-invariant: the libraries' kernels may still sum in another order for
another matrix shape or thread count. On the CPU, torch therefore runs the pinned numeric profile of
`membench.embedding.numerics`, whose variables this module sets on import (before it imports torch) and checks once torch is
loaded; under it, a vector is the same bits for any batch and thread count (measured; a test checks it).

Backends: `torch` (sentence-transformers on PyTorch, the reference) and `onnx` (the same model with its
transformer exported to and run by ONNX Runtime, `membench.embedding.onnx_model`; opt-in, its vectors are checked against
torch's by a test, not assumed equal).
`device: auto` takes a CUDA GPU when torch sees one, else the CPU.

Precision: `float32` (the default) is the model's own arithmetic, whose last bits depend on the CPU's vector
kernels even under the pinned profile (MKL picks its own branch on non-Intel CPUs), so its vectors are keyed per CPU
vendor. `float64` runs the same weights in double precision and rounds each unit vector to float32 once: the
kernels' differences (~1e-16) then vanish in the rounding (but for a value that close to a rounding boundary, about 2
in a billion), so the vectors are the same bits on any x86-64 CPU and with any profile (a test runs the AVX2 and the
CPU's native kernels and compares), at about 1.85x the CPU time.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Sequence

import numpy as np

from membench.embedding import numerics

numerics.pin_environment()  # before any import of torch: its libraries read the variables when they load

Encoder = Callable[[list[str]], np.ndarray]
BACKENDS = ("torch", "onnx")
PRECISIONS = ("float32", "float64")
TOKENIZE_CHUNK = 2048  # texts tokenised at once when measuring lengths (bounds the padded id matrix)


def pick_device(device: str) -> str:
    """`auto` -> `cuda` when torch has a GPU, else `cpu`; any other value is used as given."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_model(model_path: str, backend: str = "torch", device: str = "cpu", threads: int | None = None,
               precision: str = "float32"):
    """A SentenceTransformer for `model_path` on the chosen backend and device, using `threads` CPU threads, in
    `precision` (see the module docstring)."""
    if backend not in BACKENDS:
        raise ValueError(f"embedding backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if precision not in PRECISIONS:
        raise ValueError(f"embedding precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    if precision == "float64" and backend != "torch":
        raise ValueError("embedding precision float64 runs on the torch backend only; the onnx model is float32")
    import torch
    from sentence_transformers import SentenceTransformer

    if threads:
        torch.set_num_threads(int(threads))
    if backend == "torch" and pick_device(device) == "cpu":
        numerics.check()
    if backend == "onnx":
        from membench.embedding.onnx_model import onnx_sentence_transformer

        return onnx_sentence_transformer(model_path, pick_device(device), threads)
    model = SentenceTransformer(model_path, device=pick_device(device))
    return model.double() if precision == "float64" else model


def token_lengths(model, texts: Sequence[str]) -> list[int]:
    """How many word pieces the model reads of each text (after its own truncation)."""
    lengths: list[int] = []
    for start in range(0, len(texts), TOKENIZE_CHUNK):
        features = model.tokenize(list(texts[start:start + TOKENIZE_CHUNK]))
        lengths.extend(int(n) for n in features["attention_mask"].sum(dim=1))
    return lengths


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped by equal length (shortest first), each group cut into batches of at most batch_size."""
    groups: dict[int, list[int]] = defaultdict(list)
    for index, length in enumerate(lengths):
        groups[length].append(index)
    return [members[start:start + batch_size]
            for _, members in sorted(groups.items()) for start in range(0, len(members), batch_size)]


def padfree_encoder(model, batch_size: int = 64) -> Encoder:
    """An Encoder that runs `model` only on batches of equal-length texts (see the module docstring)."""
    def encode(texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, model.get_sentence_embedding_dimension()), dtype=np.float32)
        out: np.ndarray | None = None
        for batch in length_batches(token_lengths(model, texts), batch_size):
            vectors = model.encode([texts[i] for i in batch], batch_size=len(batch), convert_to_numpy=True,
                                   show_progress_bar=False)
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=vectors.dtype)  # float64 stays unrounded
            out[batch] = vectors
        return out

    return encode


def load_encoder(model_path: str, batch_size: int = 64, threads: int | None = None, backend: str = "torch",
                 device: str = "cpu", precision: str = "float32") -> Encoder:
    return padfree_encoder(load_model(model_path, backend, device, threads, precision), batch_size)
