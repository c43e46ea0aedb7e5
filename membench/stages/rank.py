"""rank stage: one adapter over every question of one dataset, through the gold-free view only.

The adapter sees opaque ids; this stage maps its ranking back to the benchmark's own item names and
writes the run as Parquet plus a TREC run file. A benchmark whose record says `full_depth` (LongMemEval, whose
upstream protocol scores full rankings; Procedural, AP over every label) is ranked over the whole haystack,
the others (LoCoMo) to `depth`.
"""

from __future__ import annotations

import gc
import json
import logging
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from membench.runs.sealing import SealRequest, open_adapter
from membench.benchmarks.record import Benchmark
from membench.embedding.plan import run_texts
from membench.io import atomic_write_parquet, atomic_write_text
from membench.datasets.run_files import RUN_COLUMNS, id_maps, run_table, write_trec
from membench.sessions.reader import SessionStore, StoreFiles, StorePaths
from membench.errors import SystemOutputError
from membench.metrics.efficiency import latency_summary
from membench.sessions.checks import ScoreCountError, is_short, ranking_problems
from membench.sessions.view import Query
from membench.jobs.job import Job
from membench.runs.request import RunFiles, RunRequest

log = logging.getLogger(__name__)


def granularities_for(record: Benchmark, adapter) -> list[str]:
    """What a run ranks at: the benchmark's granularities that the adapter ranks, in the benchmark's order."""
    return [g for g in record.granularities if g in adapter.granularities]


def prefetch_embeddings(record: Benchmark, adapter, store: SessionStore, queries: list[tuple[Query, str]]) -> None:
    """Embed, in one batched call, whatever the run needs that is not cached yet -- nothing when the embed
    stage ran -- so no question pays a model call of its own."""
    cache = adapter.embedder()
    if cache is not None:
        cache.ensure(run_texts(adapter, store, granularities_for(record, adapter), queries).texts)
        log.info("embeddings: %s", cache.stats())


def part_of(items: list, part: int, parts: int) -> list:
    """The `part`-th of `parts` contiguous, near-equal slices of `items` (so parts concatenate in order)."""
    return items[len(items) * part // parts: len(items) * (part + 1) // parts]


def rank_dataset(record: Benchmark, store_paths: StorePaths, adapter, depth: int,
                 facts_dir: Path | None = None, part: int = 0, parts: int = 1, name: str | None = None,
                 short: Counter | None = None, latencies: list[float] | None = None) -> pd.DataFrame:
    """Rank every query (or one contiguous part of them); returns the run with benchmark item ids.
    `store_paths`: the ingest stage's files (`membench.sessions.reader.STORE_FILES`) or the dataset folder;
    `facts_dir` feeds fact-augmented adapters. Every ranking is checked (`membench.sessions.checks`) before it is
    kept: a bad one is a `SystemOutputError` naming the run (`name`, default the adapter's) and the question;
    `short` counts, per granularity, the legal rankings with fewer than k items; `latencies` gets the seconds of
    each `rank` call (one search)."""
    if "facts" in getattr(adapter, "needs", ()) and facts_dir is None:
        raise ValueError(f"adapter {adapter.name!r} ranks over facts, but no fact logs were given")
    files = StoreFiles.of(store_paths)
    item_map, query_map = files.id_maps()
    store = SessionStore(files, user_turns_only=record.user_turns_only, facts_dir=facts_dir)
    queries = part_of(list(store.queries(adapter.uses_metadata)), part, parts)
    prefetch_embeddings(record, adapter, store, queries)
    names, qids = id_maps(item_map, query_map)
    rows: list[tuple] = []
    for granularity in granularities_for(record, adapter):
        mapping = names[granularity]
        seen = None
        for query, hay in tqdm(queries, desc=f"{adapter.name} {granularity}", mininterval=5, leave=False):
            if hay != seen:
                seen = hay
                gc.freeze()  # what is loaded so far (session logs, earlier rows) is never scanned again
                haystack = store.haystack(hay)
                ids = {d.item_id for d in haystack.documents(granularity)}
            k = record.depth_for(haystack, granularity, depth)
            began = time.perf_counter()
            try:
                ranking = adapter.rank(query, haystack, granularity, k)
            except ScoreCountError as exc:
                raise SystemOutputError(name or adapter.name, qids[query.key], [str(exc)]) from exc
            if latencies is not None:
                latencies.append(time.perf_counter() - began)
            problems = ranking_problems(ranking, k, ids)
            if problems:
                raise SystemOutputError(name or adapter.name, qids[query.key], problems)
            if short is not None and is_short(ranking, k, len(ids)):
                short[granularity] += 1
            for rank, (item, score) in enumerate(ranking, 1):
                rows.append((qids[query.key], rank, mapping[item], score, granularity))
    return run_table(rows)


def merge_parts(record: Benchmark, adapter, parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The parts of a sharded run joined into the run an unsharded job writes, row for row: granularity by
    granularity, and inside one the parts in order (each holds a contiguous slice of the queries)."""
    order = {g: i for i, g in enumerate(granularities_for(record, adapter))}
    joined = pd.concat(parts, ignore_index=True)
    joined = joined.iloc[joined.granularity.map(order).argsort(kind="stable")].reset_index(drop=True)
    merged = joined.astype(RUN_COLUMNS)
    merged.attrs = {}  # the parts' counts stay out of the run file, which is the same bytes as an unsharded run's
    return merged


@contextmanager
def adapter_of(request: RunRequest, seal: SealRequest | None):
    """The run's adapter, sealed in a process of its own where `seal` asks (membench.runs.sealing)."""
    adapter = open_adapter(request, *(seal or SealRequest()))
    try:
        yield adapter
    finally:
        if hasattr(adapter, "shutdown"):
            adapter.shutdown()


def run(request: RunRequest, files: RunFiles, part_paths: list[Path] | None = None,
        seal: SealRequest | None = None) -> pd.DataFrame:
    """Rank (or, given `part_paths`, merge the parts ranked by `run_part`) and write the run files."""
    with adapter_of(request, seal) as adapter:
        return _run(request, files, adapter, part_paths)


def _run(request: RunRequest, files: RunFiles, adapter, part_paths: list[Path] | None) -> pd.DataFrame:
    record = request.benchmark
    short: Counter = Counter()
    latencies: list[float] = []
    if part_paths:
        parts = [pd.read_parquet(p) for p in part_paths]
        for part in parts:
            short.update(part.attrs.get("short", {}))
            latencies += part.attrs.get("latencies", [])
        result = merge_parts(record, adapter, parts)
    else:
        result = rank_dataset(record, request.store, adapter, request.depth, request.facts, name=request.name,
                              short=short, latencies=latencies)
    if result.empty:
        raise ValueError(f"adapter {request.name!r} ranked nothing on a {record.kind} dataset (granularities "
                         f"{list(adapter.granularities)} vs {list(record.granularities)})")
    meta = {"name": request.name, "adapter": request.spec,
            "class": f"{type(adapter).__module__}.{type(adapter).__qualname__}",
            "config": adapter.config(), "uses_metadata": list(adapter.uses_metadata),
            "granularities": granularities_for(record, adapter), "depth": record.depth_label(request.depth),
            "facts": str(request.facts) if request.facts else None,
            "short_rankings": {g: short[g] for g in granularities_for(record, adapter)},
            "latency_ms": latency_summary(latencies),
            **({"sealed": adapter.label} if hasattr(adapter, "label") else {})}
    atomic_write_parquet(result, files.run)
    write_trec(result, files.trec, request.name)
    atomic_write_text(files.meta, json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
    log.info("%s: %d rows for %d questions; config %s", request.name, len(result), result.question_id.nunique(),
             adapter.config())
    return result


def run_part(request: RunRequest, part: int, parts: int, out: Path, seal: SealRequest | None = None) -> pd.DataFrame:
    """Rank one contiguous part of the queries (a shard of a large dataset's rank job)."""
    short: Counter = Counter()
    latencies: list[float] = []
    with adapter_of(request, seal) as adapter:
        result = rank_dataset(request.benchmark, request.store, adapter, request.depth, request.facts, part, parts,
                              name=request.name, short=short, latencies=latencies)
    result.attrs.update(short=dict(short), latencies=latencies)  # in the part's Parquet metadata, for the merge
    atomic_write_parquet(result, out)
    log.info("part %d/%d: %d rows for %d questions", part, parts, len(result), result.question_id.nunique())
    return result


def rule_rank(job: Job) -> None:
    """Rule rank: one adapter over every question of one dataset (or the merge of its rank_part jobs)."""
    run(RunRequest.from_job(job), RunFiles.from_job(job), job.input.paths("parts"), SealRequest.from_job(job))
