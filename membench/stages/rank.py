"""rank stage: one adapter over every question of one dataset, through the gold-free view only.

The adapter sees opaque ids; this stage maps its ranking back to the benchmark's own item names and
writes the run as Parquet plus a TREC run file. LongMemEval is ranked over the whole haystack (the
upstream protocol scores full rankings), and so is Procedural (AP over every label); LoCoMo to `depth`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from membench.adapters.registry import load_adapter
from membench.datasets.registry import GRANULARITIES, USER_TURNS_ONLY
from membench.io import atomic_path, atomic_write_parquet, atomic_write_text
from membench.sessions.reader import SessionStore

log = logging.getLogger(__name__)
RUN_COLUMNS = {"question_id": "string", "rank": "int64", "item_id": "string", "score": "float64",
               "granularity": "string"}
FULL_DEPTH_KINDS = {"longmemeval", "procedural"}  # Procedural: 336 trajectories, so AP is the full-label MAP


def granularities_for(kind: str, adapter) -> list[str]:
    return [g for g in GRANULARITIES[kind] if g in adapter.granularities]


def rank_dataset(kind: str, dataset_dir: Path, adapter, depth: int, facts_dir: Path | None = None) -> pd.DataFrame:
    """Rank every query; returns the run with benchmark item ids. `facts_dir` feeds fact-augmented adapters."""
    if getattr(adapter, "needs_facts", False) and facts_dir is None:
        raise ValueError(f"adapter {adapter.name!r} ranks over facts, but no fact logs were given")
    store = SessionStore(dataset_dir, user_turns_only=USER_TURNS_ONLY[kind], facts_dir=facts_dir)
    items = pd.read_parquet(dataset_dir / "maps" / "item_map.parquet")
    names = {g: dict(zip(part.opaque_id, part.item_id)) for g, part in items.groupby("granularity")}
    names["trajectory"] = names["session"]
    qids = dict(pd.read_parquet(dataset_dir / "maps" / "query_map.parquet").itertuples(index=False))
    rows: list[tuple] = []
    for granularity in granularities_for(kind, adapter):
        mapping = names[granularity]
        queries = list(store.queries(adapter.uses_metadata))
        for query, hay in tqdm(queries, desc=f"{adapter.name} {granularity}", mininterval=5, leave=False):
            haystack = store.haystack(hay)
            k = len(haystack.documents(granularity)) if kind in FULL_DEPTH_KINDS else depth
            for rank, (item, score) in enumerate(adapter.rank(query, haystack, granularity, k), 1):
                rows.append((qids[query.key], rank, mapping[item], score, granularity))
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS)).astype(RUN_COLUMNS)


def write_trec(run: pd.DataFrame, path: Path, tag: str) -> None:
    """TREC run format: qid Q0 docid rank score tag (one file, granularity folded into the qid if several)."""
    several = run.granularity.nunique() > 1
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for r in run.itertuples(index=False):
            qid = f"{r.question_id}/{r.granularity}" if several else r.question_id
            fh.write(f"{qid} Q0 {r.item_id} {r.rank} {r.score:.6f} {tag}\n")


def run(kind: str, dataset_dir: Path, spec: str, params: dict[str, Any], depth: int, run_path: Path,
        trec_path: Path, meta_path: Path, embedding_cache_dir: Path | None, name: str,
        facts_dir: Path | None = None) -> pd.DataFrame:
    adapter = load_adapter(spec, params, {"embedding_cache_dir": embedding_cache_dir})
    result = rank_dataset(kind, Path(dataset_dir), adapter, depth, facts_dir)
    if result.empty:
        raise ValueError(f"adapter {name!r} ranked nothing on a {kind} dataset (granularities "
                         f"{list(adapter.granularities)} vs {list(GRANULARITIES[kind])})")
    meta = {"name": name, "adapter": spec, "class": f"{type(adapter).__module__}.{type(adapter).__qualname__}",
            "config": adapter.config(), "uses_metadata": list(adapter.uses_metadata),
            "granularities": granularities_for(kind, adapter), "depth": "full" if kind in FULL_DEPTH_KINDS else depth,
            "facts": str(facts_dir) if facts_dir else None}
    atomic_write_parquet(result, run_path)
    write_trec(result, trec_path, name)
    atomic_write_text(meta_path, json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
    log.info("%s: %d rows for %d questions; config %s", name, len(result), result.question_id.nunique(),
             adapter.config())
    return result
