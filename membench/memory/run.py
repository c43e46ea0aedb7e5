"""Run a memory system over one dataset: ingest each store once (resuming a cut-off ingest), then search.

Hits become a ranking of the dataset's items at each granularity the dataset is scored at: at turn
level every turn ref a hit names (a derived fact names several), at session level the sessions those
refs (or session keys) belong to; first mention wins, and a ref that is not a ranked unit (LongMemEval ranks
user turns only) is dropped. Every answer is checked first (`membench.sessions.checks`): a ref outside the
question's haystack, a ref twice in one hit, a score that is not finite or more than k hits is a
`SystemOutputError` naming the run and the question. Every run on a dataset is
asked for the same k as the adapters (`retrieval.depth`; LongMemEval: the whole haystack); a search that
yields fewer than k items is counted as short, so the report can flag it. A question is searched once per k
(LoCoMo: once, its turn and session rankings both come from those hits). A hit that names no turn but carries
its text is attributed to the scope's turns (`membench.memory.attribution`) when a rule is given; the items it
ranks are flagged in the run's `attributed` column, present only when some are.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from membench.benchmarks.record import Benchmark
from membench.datasets.run_files import id_maps, run_table
from membench.datasets.tables import needed
from membench.errors import SystemOutputError
from membench.memory.attribution import Attribution, ScopeAttribution
from membench.memory.withheld import WithheldRefs
from membench.memory.ledger import IngestLedger
from membench.memory.plan import plan_stores
from membench.memory.protocol import Hit, MemoryContext, MemorySystem, Scope, SessionLog
from membench.sessions.checks import hits_problems
from membench.sessions.reader import SessionStore, StoreFiles, StorePaths
from membench.sessions.view import Haystack, Query


class MemoryRunStopped(RuntimeError):
    """The model-call budget ran out (or the endpoint refused) during a memory run; a rerun resumes."""


@dataclass
class Accounting:
    """Ingest and search cost of one run, and what the fairness check needs."""

    stores: int = 0
    sessions_in_stores: int = 0
    ingested: Counter = field(default_factory=Counter)  # session key -> ingests in this run
    reused: int = 0  # sessions already in a store from an earlier run
    resumed: int = 0  # cut-off sessions forgotten and ingested again
    ingest_seconds: float = 0.0
    search_seconds: float = 0.0
    searches: int = 0
    latencies: list = field(default_factory=list)  # seconds of each search
    short: Counter = field(default_factory=Counter)  # granularity -> searches with fewer than k items
    fewest: dict = field(default_factory=dict)  # granularity -> smallest items/k seen
    foreign_refs: int = 0
    store_bytes: int = 0
    k: dict = field(default_factory=dict)  # granularity -> "full" or the depth
    attribution: dict | None = None  # the rule, and hits attributed / dropped (no refs, no attribution found)

    def as_dict(self, model_calls: dict[str, Any]) -> dict[str, Any]:
        return {"attribution": self.attribution,
                "stores": self.stores, "sessions_in_stores": self.sessions_in_stores,
                "sessions_ingested": sum(self.ingested.values()), "sessions_reused": self.reused,
                "sessions_resumed": self.resumed, "ingest_seconds": round(self.ingest_seconds, 3),
                "search_seconds": round(self.search_seconds, 3), "searches": self.searches,
                "store_bytes": self.store_bytes, "k": self.k, "short_searches": dict(self.short),
                "fewest_items_share": {g: round(v, 4) for g, v in self.fewest.items()},
                "foreign_refs": self.foreign_refs, "model_calls": model_calls}


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def ranked_items(hits, granularity: str, haystack: Haystack, documents: set[str]) -> tuple[list, int]:
    """(item, score, attributed) the hits name at `granularity`, first mention first; and the foreign-ref count."""
    session_of = {e.ref: s.session_id for s in haystack.sessions for e in s.events}
    session_of.update({s.session_id: s.session_id for s in haystack.sessions})
    items, seen, foreign = [], set(), 0
    for hit in hits:
        for ref in hit.refs:
            if ref not in session_of:
                foreign += 1
                continue
            item = ref if granularity == "turn" else session_of[ref]
            if item in documents and item not in seen:
                seen.add(item)
                items.append((item, hit.score, hit.attributed))
    return items, foreign


def attribute_hits(hits: Sequence[Hit], scope: Scope, attribution: ScopeAttribution | None, acc: Accounting) -> list:
    """The hits with each one that names no turn but carries text attributed to the scope's turns (counted)."""
    if attribution is None:
        return list(hits)
    texts = [hit.text for hit in hits if not hit.refs and hit.text.strip()]
    found = iter(attribution(texts, scope.sessions, scope.directory))
    out = []
    for hit in hits:
        if not hit.refs:
            refs = next(found) if hit.text.strip() else ()
            acc.attribution["hits_attributed" if refs else "hits_dropped"] += 1
            hit = replace(hit, refs=refs, attributed=True)
        out.append(hit)
    return out


def _phase(endpoint, stage: str) -> None:
    """Count the next model calls under `stage` (ingest or search) in the cost table."""
    if endpoint is not None:
        endpoint.stage = stage


def ingest_store(system: MemorySystem, sessions, directory: Path, store_dir: Path, acc: Accounting,
                 endpoint=None, queries: Sequence[Query] = ()) -> None:
    """Ingest the sessions not yet in the store (forgetting a cut-off one first); `queries`, the questions the
    store will be searched for, go to `system.prepare` with the sessions still to ingest."""
    ledger = IngestLedger(store_dir)
    for key in sorted(ledger.cut_off()):
        system.forget(key)
        acc.resumed += 1
    logs = [SessionLog(s.session_id, directory / s.session_id / "events.jsonl", s.timestamp) for s in sessions]
    todo = [log for log in logs if log.key not in ledger.done]
    acc.reused += len(logs) - len(todo)
    began = time.perf_counter()
    system.prepare(todo, queries)
    acc.ingest_seconds += time.perf_counter() - began
    for log in todo:
        calls = endpoint.calls() if endpoint else 0
        ledger.start(log.key)
        began = time.perf_counter()
        try:
            system.ingest(log)
        except Exception as exc:
            if endpoint is not None and endpoint.stopped:
                raise MemoryRunStopped(f"{system.name}: ingest stopped: {endpoint.stopped}; everything paid for "
                                       "is cached and the ingest resumes on the next run") from exc
            raise
        seconds = time.perf_counter() - began
        acc.ingest_seconds += seconds
        acc.ingested[log.key] += 1
        ledger.finish(log.key, seconds, (endpoint.calls() if endpoint else 0) - calls)


def run_memory(record: Benchmark, store_paths: StorePaths, system: MemorySystem, depth: int, store_root: Path,
               embedding_cache=None, endpoint=None, name: str | None = None,
               attribution: Attribution | None = None,
               withhold_refs: bool = False) -> tuple[pd.DataFrame, Accounting]:
    """Ingest and search every query of one dataset; the run (benchmark item ids) and its accounting.
    `store_paths`: the ingest stage's files (`membench.sessions.reader.STORE_FILES`) or the dataset folder;
    `attribution`: the rule for hits without refs (None: they are dropped); `withhold_refs`: every hit goes through
    it, checked against the refs it had (`membench.memory.withheld`)."""
    if withhold_refs and attribution is None:
        raise ValueError(f"run {name or system.name!r}: refs: withheld scores the run by attribution, which is off "
                         "(memory_attribution: false)")
    files = StoreFiles.of(store_paths)
    directory, (item_map, query_map) = files.sessions, files.id_maps()
    store = SessionStore(files, user_turns_only=record.user_turns_only)
    names, qids = id_maps(item_map, query_map)
    granularities = [g for g in record.granularities if g in system.granularities]
    queries: dict[str, list] = {}
    for query, hay in store.queries(system.uses_metadata):
        queries.setdefault(hay, []).append(query)
    order = {q.key: i for i, q in enumerate(q for qs in queries.values() for q in qs)}
    plan = plan_stores(store, list(queries), system.shares_sessions)
    acc = Accounting(k={g: record.depth_label(depth) for g in granularities})
    attributor = None
    if attribution is not None:
        attributor = ScopeAttribution(attribution, embedding_cache)
        acc.attribution = {"rule": vars(attribution), "hits_attributed": 0, "hits_dropped": 0}
    withheld = WithheldRefs() if withhold_refs else None
    rows: list[tuple] = []
    for store_key, sessions in plan.sessions.items():
        store_dir = Path(store_root) / store_key
        store_dir.mkdir(parents=True, exist_ok=True)
        system.open(MemoryContext(store_dir, embedding_cache, endpoint.url if endpoint else None,
                                  endpoint.client.model if endpoint else None, run=name or system.name))
        try:
            _phase(endpoint, "memory-ingest")
            ingest_store(system, sessions, directory, store_dir, acc, endpoint,
                         [q for hay in plan.haystacks[store_key] for q in queries[hay]])
            acc.stores += 1
            acc.sessions_in_stores += len(sessions)
            _phase(endpoint, "memory-search")
            for hay in plan.haystacks[store_key]:
                haystack = store.haystack(hay)
                scope = Scope(tuple(s.session_id for s in haystack.sessions), directory)
                refs = set(scope.sessions) | {e.ref for s in haystack.sessions for e in s.events}
                asked: dict[tuple[str, int], Any] = {}  # one search per question and k, whatever the granularity
                for granularity in granularities:
                    documents = [d.item_id for d in haystack.documents(granularity)]
                    k = record.depth_for(haystack, granularity, depth)
                    for query in queries[hay]:
                        if (query.key, k) not in asked:
                            began = time.perf_counter()
                            asked[query.key, k] = hits = system.search(query, k, scope)
                            acc.latencies.append(time.perf_counter() - began)
                            acc.search_seconds += acc.latencies[-1]
                            acc.searches += 1
                            problems = hits_problems(hits, k, refs)
                            if problems:
                                raise SystemOutputError(name or system.name, qids[query.key], problems)
                            if withheld is not None:
                                hits, truth = withheld.strip(hits)
                            asked[query.key, k] = attribute_hits(hits, scope, attributor, acc)
                            if withheld is not None:
                                withheld.compare(asked[query.key, k], truth)
                        hits = asked[query.key, k]
                        found, foreign = ranked_items(hits, granularity, haystack, set(documents))
                        found = found[:k]
                        acc.foreign_refs += foreign
                        wanted = min(k, len(documents))
                        if len(found) < wanted:
                            acc.short[granularity] += 1
                        share = len(found) / wanted if wanted else 1.0
                        acc.fewest[granularity] = min(acc.fewest.get(granularity, 1.0), share)
                        mapping = names[granularity]
                        rows += [(granularities.index(granularity), order[query.key], qids[query.key], rank,
                                  mapping[item], score, granularity, attributed)
                                 for rank, (item, score, attributed) in enumerate(found, 1)]
        finally:
            system.close()
        acc.store_bytes += folder_bytes(store_dir)
    if withheld is not None:
        acc.attribution["against_withheld_refs"] = withheld.as_dict()
    rows.sort(key=lambda r: r[:2] + (r[3],))
    run = run_table([r[2:-1] for r in rows])
    if any(r[-1] for r in rows):
        run["attributed"] = pd.array([r[-1] for r in rows], dtype="boolean")
    return run, acc
