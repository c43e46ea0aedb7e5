"""The opt-in ONNX Runtime backend: the same sentence-transformers model with its transformer run by ONNX Runtime.

Why: ONNX Runtime is often faster than PyTorch for small encoders on CPU. The transformer is exported once
(PyTorch's TorchScript-based exporter, opset 17) into `$MEMBENCH_ONNX_DIR` (default `~/.cache/membench/onnx`)
under a name that hashes the model's files, and reused; tokenisation and everything after the transformer
(pooling, normalisation) are the model's own sentence-transformers modules, so only the transformer's arithmetic
changes. Its vectors are cached under their own model key (`@onnx`): they are close to torch's (a test checks
cosine >= 0.999 and the same top 10 on real data) but not equal to the last bit.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from membench.machine.environment import model_revision

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export_dir() -> Path:
    return Path(os.environ.get("MEMBENCH_ONNX_DIR") or Path.home() / ".cache" / "membench" / "onnx")


def export_transformer(model, out: Path) -> None:
    """Write the model's transformer (token ids -> token embeddings) as ONNX, atomically."""
    import torch

    from membench.io import atomic_path

    hf = model[0].auto_model.eval()
    sample = model.tokenize(["a short text", "a somewhat longer text to trace"])
    names = [n for n in INPUTS if n in sample]

    class Transformer(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *tensors):
            return self.inner(**dict(zip(names, tensors))).last_hidden_state

    axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "token_embeddings"]}
    with atomic_path(out) as tmp, torch.no_grad():
        torch.onnx.export(Transformer(hf), tuple(sample[n] for n in names), str(tmp), input_names=names,
                          output_names=["token_embeddings"], dynamic_axes=axes, opset_version=17, dynamo=False)


class OnnxSentenceModel:
    """The parts of the SentenceTransformer API the encoder uses, with the transformer on ONNX Runtime."""

    def __init__(self, model, onnx_path: Path, threads: int | None = None):
        import onnxruntime

        self.model = model
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = int(threads)
        self.session = onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.names = [i.name for i in self.session.get_inputs()]

    def tokenize(self, texts):
        return self.model.tokenize(texts)

    def get_sentence_embedding_dimension(self) -> int:
        return self.model.get_sentence_embedding_dimension()

    def encode(self, texts, batch_size: int = 64, convert_to_numpy: bool = True, show_progress_bar: bool = False):
        import torch

        chunks = []
        for start in range(0, len(texts), batch_size):
            features = self.model.tokenize(list(texts[start:start + batch_size]))
            tokens = self.session.run(None, {n: features[n].numpy() for n in self.names})[0]
            features = {"token_embeddings": torch.from_numpy(tokens), "attention_mask": features["attention_mask"]}
            for module in list(self.model)[1:]:  # pooling, normalisation: the model's own modules
                features = module(features)
            chunks.append(features["sentence_embedding"].detach().numpy())
        return np.concatenate(chunks).astype(np.float32)


def onnx_sentence_transformer(model_path: str, device: str = "cpu", threads: int | None = None):
    """The model at `model_path` with its transformer exported to (or read from) the ONNX cache."""
    from sentence_transformers import SentenceTransformer

    if device != "cpu":
        raise ValueError(f"the onnx backend runs on the CPU here; use backend torch for device {device!r}")
    model = SentenceTransformer(model_path, device="cpu")
    onnx_path = export_dir() / f"{Path(model_path).name}-{model_revision(model_path)}.onnx"
    if not onnx_path.exists():
        export_transformer(model, onnx_path)
    return OnnxSentenceModel(model, onnx_path, threads)
