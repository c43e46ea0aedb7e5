"""rank_memory stage: one memory system over one dataset -> the same run files as the rank stage,
plus the ingest/search accounting in the run metadata and a cost record for the model-call table.

The store lives in `<store_root>/<store key>` (kept between runs: a rerun reuses what was ingested).
A system with model calls gets membench's caching endpoint (`CachingEndpoint`) for the run.
"""

from __future__ import annotations

import json
import logging
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Mapping, Sequence

from membench.memory.protocol import is_memory_system
from membench.runs.registry import resolve
from membench.runs.request import RunFiles, RunRequest
from membench.datasets.run_files import write_trec
from membench.embedding.cache import shared_cache
from membench.io import atomic_write_parquet, atomic_write_text
from membench.memory.attribution import Attribution
from membench.memory.endpoint import CachingEndpoint, free_port
from membench.memory.run import run_memory
from membench.metrics.efficiency import latency_summary
from membench.memory.sealed.seal import seal_kind
from membench.runs.sealing import seal_for
from membench.memory.sealed.parent import SealedSystem
from membench.llm.stage_calls import make_client, write_cost
from membench.jobs.job import Job

log = logging.getLogger(__name__)
STAGES = ("memory-ingest", "memory-search")


def run(request: RunRequest, files: RunFiles, cost_path: Path, store_root: Path, llm: Mapping[str, Any],
        llm_cache: Path, dataset: str, sealed: bool | str = False, gold: Sequence[Path] = (),
        timeout: float | None = None, attribution: Any = True, refs: str = "kept") -> dict:
    """Ingest and search with the system `request` names; write its run files and its cost record. `llm`: the
    config's `llm` section, read when the system makes model calls. `sealed` (the config's `memory_sealed`): the
    system runs in a process of its own that cannot read the gold (`membench.memory.sealed.parent`); `gold` adds the
    benchmark's files to what it may not read; `timeout`: seconds a sealed call may take; `attribution` (the config's
    `memory_attribution`): the rule for results without refs (`membench.memory.attribution.Attribution.from_params`);
    `refs` (the run's `refs`): "withheld" scores every result by attribution (`membench.memory.withheld`)."""
    cls, name, record = resolve(request.spec), request.name, request.benchmark
    if not is_memory_system(cls):
        raise ValueError(f"run {name!r}: {request.spec!r} is not a memory system (membench.memory.protocol.MemorySystem)")
    kind = seal_kind(sealed)
    with ExitStack() as stack:
        port = free_port() if kind else 0  # the caching endpoint's, named to the seal before the system starts
        if kind:
            system = SealedSystem(name, cls, request.params, seal_for(request, cls, store_root, gold, kind),
                                  (request.embeddings, request.embedding_options), timeout, (port,))
            stack.callback(system.shutdown)
        else:
            system = cls(**dict(request.params))
        endpoint = None
        if system.makes_model_calls:
            client = make_client({"llm": dict(llm)}, llm_cache, stage=STAGES[0])
            stack.callback(client.close)
            endpoint = stack.enter_context(CachingEndpoint(client, STAGES[0], port))
        result, acc = run_memory(record, request.store, system, request.depth, Path(store_root),
                                 shared_cache(request.embeddings, **dict(request.embedding_options)), endpoint,
                                 name, Attribution.from_params(attribution), withhold_refs=refs == "withheld")
        system_stats = system.stats()
        calls = {s: (endpoint.client.meter.stage(s) if endpoint else {"calls": 0, "cache_hits": 0}) for s in STAGES}
        cost = write_cost(None, endpoint.client, stage="memory", dataset=dataset, adapter=name) if endpoint else {
            "stage": "memory", "dataset": dataset, "adapter": name, "status": "complete", "model": None,
            "summary": {"stages": {s: {"calls": 0, "cache_hits": 0} for s in STAGES}}}
    if result.empty:
        raise ValueError(f"memory system {name!r} returned nothing on a {record.kind} dataset")
    memory = acc.as_dict({s: {"calls": c.get("calls", 0), "cache_hits": c.get("cache_hits", 0)}
                          for s, c in calls.items()})
    meta = {"name": name, "adapter": request.spec, "class": f"{cls.__module__}.{cls.__qualname__}",
            "config": system.config(), "uses_metadata": list(system.uses_metadata),
            "granularities": list(acc.k), "depth": "full" if "full" in acc.k.values() else request.depth,
            "facts": None, "latency_ms": latency_summary(acc.latencies),
            "memory": {**memory, "shares_sessions": system.shares_sessions, "ingested": system.ingests(),
                       "sealed": system.label if kind else False, "system": system_stats}}
    atomic_write_parquet(result, files.run)
    write_trec(result, files.trec, name)
    atomic_write_text(files.meta, json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
    atomic_write_text(Path(cost_path), json.dumps(cost, indent=2, sort_keys=True, default=str) + "\n")
    log.info("%s: %d rows; %d sessions ingested, %d reused; ingest %.1f s, search %.1f s", name, len(result),
             memory["sessions_ingested"], memory["sessions_reused"], memory["ingest_seconds"],
             memory["search_seconds"])
    return meta


def rule_rank_memory(job: Job) -> None:
    """Rule rank_memory: a memory system ingests the session logs once, then answers every question's search."""
    p = job.params
    run(RunRequest.from_job(job), RunFiles.from_job(job), job.output.path("cost"), Path(p.store), p.llm,
        Path(p.llm_cache), job.wildcards.dataset, p.sealed, [Path(p.data)], p.sealed_timeout, p.attribution, p.refs)
