"""The memory rank stage: one memory system over one dataset -> the same run files as the rank stage,
plus the ingest/search accounting in the run metadata and a cost record for the model-call table.

The store lives in `<store_root>/<store key>` (kept between runs: a rerun reuses what was ingested).
A system with model calls gets membench's caching endpoint (`CachingEndpoint`) for the run.
"""

from __future__ import annotations

import json
import logging
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Mapping

from membench.adapters.registry import resolve
from membench.datasets.run_files import write_trec
from membench.embedding.cache import shared_cache
from membench.io import atomic_write_parquet, atomic_write_text
from membench.memory.endpoint import CachingEndpoint
from membench.memory.registry import is_memory_system, load_memory_system
from membench.memory.run import run_memory
from membench.sessions.reader import StorePaths
from membench.stages.model_calls import make_client, write_cost
from membench.plumbing.job import Job

log = logging.getLogger(__name__)
STAGES = ("memory-ingest", "memory-search")


def run(kind: str, store_paths: StorePaths, spec: str, params: Mapping[str, Any], depth: int, name: str, *,
        run_path: Path, trec_path: Path, meta_path: Path, cost_path: Path, store_root: Path,
        embeddings_dir: Path | None, config: Mapping[str, Any], llm_cache: Path, dataset: str,
        embedding_options: Mapping[str, Any] | None = None) -> dict:
    cls = resolve(spec)
    if not is_memory_system(cls):
        raise ValueError(f"run {name!r}: {spec!r} is not a memory system (membench.memory.protocol.MemorySystem)")
    system = load_memory_system(cls, params)
    with ExitStack() as stack:
        endpoint = None
        if system.makes_model_calls:
            client = make_client(config, llm_cache, stage=STAGES[0])
            stack.callback(client.close)
            endpoint = stack.enter_context(CachingEndpoint(client, STAGES[0]))
        result, acc = run_memory(kind, store_paths, system, depth, Path(store_root),
                                 shared_cache(embeddings_dir, **dict(embedding_options or {})), endpoint)
        calls = {s: (endpoint.client.meter.stage(s) if endpoint else {"calls": 0, "cache_hits": 0}) for s in STAGES}
        cost = write_cost(None, endpoint.client, stage="memory", dataset=dataset, adapter=name) if endpoint else {
            "stage": "memory", "dataset": dataset, "adapter": name, "status": "complete", "model": None,
            "summary": {"stages": {s: {"calls": 0, "cache_hits": 0} for s in STAGES}}}
    if result.empty:
        raise ValueError(f"memory system {name!r} returned nothing on a {kind} dataset")
    memory = acc.as_dict({s: {"calls": c.get("calls", 0), "cache_hits": c.get("cache_hits", 0)}
                          for s, c in calls.items()})
    meta = {"name": name, "adapter": spec, "class": f"{type(system).__module__}.{type(system).__qualname__}",
            "config": system.config(), "uses_metadata": list(system.uses_metadata),
            "granularities": list(acc.k), "depth": "full" if "full" in acc.k.values() else depth,
            "facts": None,
            "memory": {**memory, "shares_sessions": system.shares_sessions, "ingested": system.ingests()}}
    atomic_write_parquet(result, Path(run_path))
    write_trec(result, Path(trec_path), name)
    atomic_write_text(Path(meta_path), json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
    atomic_write_text(Path(cost_path), json.dumps(cost, indent=2, sort_keys=True, default=str) + "\n")
    log.info("%s: %d rows; %d sessions ingested, %d reused; ingest %.1f s, search %.1f s", name, len(result),
             memory["sessions_ingested"], memory["sessions_reused"], memory["ingest_seconds"],
             memory["search_seconds"])
    return meta


def rule_rank_memory(job: Job) -> None:
    """Rule rank_memory: a memory system ingests the session logs once, then answers every question's search."""
    out, p, w = job.output, job.params, job.wildcards
    run(p.kind, job.input.files(), p.spec, dict(p.adapter_params), p.depth, w.adapter, run_path=out.run,
        trec_path=out.trec, meta_path=out.meta, cost_path=out.cost, store_root=Path(p.store),
        embeddings_dir=Path(p.embeddings), config={"llm": dict(p.llm)}, llm_cache=Path(p.llm_cache),
        dataset=w.dataset, embedding_options=dict(p.embedding_options))
