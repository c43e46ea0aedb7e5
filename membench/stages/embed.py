"""embed stage: each shard embeds its share of the distinct texts (balanced by length) into the content-addressed
cache (`membench.embedding.cache`); shards run side by side on every core (or on many cluster nodes), and a text already
in the cache costs nothing. Rank jobs of embedding runs wait for their dataset's `mark_embedded` marker, written
once the shards that embed its texts are done. This module imports only the encoder side, so editing an adapter or
a benchmark does not rerun the shards (their code version is this module's import closure).
"""

from __future__ import annotations

import heapq
import json
import logging
import time
from pathlib import Path
from typing import Any

import pandas as pd

from membench.embedding.cache import EmbeddingCache, default_model_path
from membench.embedding.record import embedding_record
from membench.io import atomic_write_text
from membench.jobs.job import Job

log = logging.getLogger(__name__)

TEXT_COLUMNS = {"model_path": "string", "text": "string"}  # the texts table: `membench.stages.embed_texts` writes it


CHUNK = 4096  # texts embedded, then written to the cache, at a time


# A text's share of a shard's work: its length in characters, capped where the model truncates (256 word pieces
# of ~4.7 characters). On S-100's 13,037 texts, shards balanced on it carry work (word pieces, weighted for
# attention) within 0.02% of each other; on a sha256 split they were 1.8% apart, and tokenising every text in
# every shard to balance on exact word pieces costs ~5 s per shard.
COST_CAP = 1200


def shard_owners(texts: list[str], shards: int) -> list[int]:
    """Each text's shard: the longest text first to the least-loaded shard (ties: lower index), cost = capped
    length. A function of the texts alone, so every shard job computes the same partition without talking to the
    others; the vectors do not depend on it (membench.embedding.encoder), only how evenly the cores are used."""
    costs = [min(len(t), COST_CAP) for t in texts]
    order = sorted(range(len(texts)), key=lambda i: (-costs[i], texts[i]))
    loads = [(0, s) for s in range(shards)]
    owners = [0] * len(texts)
    for i in order:
        load, s = heapq.heappop(loads)
        owners[i] = s
        heapq.heappush(loads, (load + costs[i], s))
    return owners


def embed_shard(texts_paths: Path | list[Path], shard: int, shards: int, cache_dir: Path, manifest_path: Path,
                options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Embed this shard's texts of every given texts table (one per dataset) into the cache, only those not
    cached yet; the manifest records the counts and what the vectors were computed on
    (`membench.embedding.record.embedding_record`). One job serves all datasets so that a run loads the model
    once per shard, not once per shard and dataset (a load costs ~9 CPU-s, mostly imports)."""
    paths = [texts_paths] if isinstance(texts_paths, (str, Path)) else list(texts_paths)
    table = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True) if paths else \
        pd.DataFrame(columns=list(TEXT_COLUMNS)).astype(TEXT_COLUMNS)
    table = table.drop_duplicates(ignore_index=True)
    manifest: dict[str, Any] = {"shard": shard, "shards": shards, "models": {}}
    for model_path, part in table.groupby("model_path", sort=True):
        every = part.text.tolist()  # distinct (drop_duplicates above); shard_owners ignores their order
        texts = [t for t, owner in zip(every, shard_owners(every, shards)) if owner == shard]
        cache = EmbeddingCache(cache_dir, model_path=model_path or None, **(options or {}))
        start = time.perf_counter()
        by_length = sorted(texts, key=len)  # a chunk of similar lengths fills its equal-length batches
        for first in range(0, len(by_length), CHUNK):
            cache.ensure(by_length[first:first + CHUNK])
            cache.flush()  # on disk chunk by chunk: a killed job resumes from its last chunk
            log.info("shard %d/%d: %d of %d texts in %.0f s", shard, shards, min(first + CHUNK, len(texts)),
                     len(texts), time.perf_counter() - start)
        seconds = time.perf_counter() - start
        manifest["models"][cache.model_id] = {
            "texts": len(texts), "embedded": cache.misses, "cached": len(texts) - cache.misses,
            "seconds": round(seconds, 3),
            "environment": embedding_record(model_path or default_model_path(), cache.numeric_tag)}
        log.info("shard %d/%d, %s: %d texts, %d embedded in %.1f s", shard, shards, cache.model_id, len(texts),
                 cache.misses, seconds)
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def mark_embedded(dataset: str, manifests: list[Path], marker: Path) -> dict[str, Any]:
    """Write the marker the rank jobs of `dataset`'s embedding runs wait for: the manifests of the shards that
    embedded its texts (with those of the other datasets of the same run)."""
    out = {"dataset": dataset, "shards": {str(p): json.loads(p.read_text(encoding="utf-8")) for p in manifests}}
    atomic_write_text(marker, json.dumps(out, indent=2, sort_keys=True) + "\n")
    return out


def rule_embed(job: Job) -> None:
    """Rule embed: one shard of the datasets' distinct texts -> vectors in the embedding cache (+ a manifest)."""
    embed_shard(job.input.paths("texts"), int(job.wildcards.shard), job.params.shards, Path(job.params.cache),
                job.output.path("manifest"), {**job.params.options, "threads": job.threads})
