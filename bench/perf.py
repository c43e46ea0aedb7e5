"""Speed and memory figures against the performance model (DESIGN §7). Prints, asserts nothing.

    python bench/perf.py [--data ../shared/data] [--texts 400]

Measures: parse + ingest per dataset, Parquet vs JSON read, rank-bm25 index/query on a ~500-turn
haystack, MiniLM embedding throughput (cold) and cache hits (warm), a Snakemake dry run's DAG time,
and the peak memory of this process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402
from rank_bm25 import BM25Okapi  # noqa: E402

from membench.benchmarks.registry import parse_dataset  # noqa: E402
from membench.embedding.cache import EmbeddingCache  # noqa: E402
from membench.stages.ingest import ingest  # noqa: E402
from membench.sessions.reader import SessionStore  # noqa: E402


def timed(fn, *args, repeat: int = 1):
    start = time.perf_counter()
    for _ in range(repeat):
        out = fn(*args)
    return (time.perf_counter() - start) / repeat, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--texts", type=int, default=400, help="texts to embed for the throughput figure")
    args = ap.parse_args()
    data = Path(args.data)
    work = Path(tempfile.mkdtemp(prefix="membench-bench-"))
    print(f"{'measure':58s} {'value':>14s}")

    for kind, folder in (("longmemeval", "longmemeval"), ("locomo", "locomo"), ("procedural", "procedural")):
        out = work / kind
        t_parse, parsed = timed(parse_dataset, kind, data / folder)
        parsed.write(out, {})
        t_ingest, summary = timed(ingest, out, out)
        print(f"{kind + ': parse (s)':58s} {t_parse:14.3f}")
        label = f"{kind}: ingest, {summary['sessions']} session logs (s)"
        print(f"{label:58s} {t_ingest:14.3f}")

    raw = data / "locomo" / "locomo10.json"
    t_json, _ = timed(lambda: json.loads(raw.read_bytes()), repeat=5)
    t_pq, _ = timed(lambda: pd.read_parquet(work / "locomo" / "turns.parquet"), repeat=5)
    print(f"{'locomo: read native JSON (ms)':58s} {t_json * 1000:14.2f}")
    print(f"{'locomo: read turns.parquet (ms)':58s} {t_pq * 1000:14.2f}")
    print(f"{'  JSON / Parquet':58s} {t_json / t_pq:14.1f}x")

    store = SessionStore(work / "longmemeval", user_turns_only=True)
    query, hay = next(store.queries())
    docs = [d.text.split(" ") for d in store.haystack(hay).documents("turn")]
    t_index, bm25 = timed(BM25Okapi, docs, repeat=5)
    t_query, _ = timed(bm25.get_scores, query.text.split(" "), repeat=20)
    label = f"bm25: index a {len(docs)}-turn haystack (ms)"
    print(f"{label:58s} {t_index * 1000:14.2f}")
    print(f"{'bm25: one query (ms)':58s} {t_query * 1000:14.3f}")

    turns = pd.read_parquet(work / "locomo" / "turns.parquet").text.drop_duplicates().head(args.texts).tolist()
    cache = EmbeddingCache(work / "emb")
    t_load, _ = timed(cache.encode, ["warm-up: loads the model"])
    print(f"{'MiniLM: load the model + first text (s)':58s} {t_load:14.2f}")
    t_cold, _ = timed(cache.encode, turns)
    t_warm, _ = timed(cache.encode, turns)
    label = f"MiniLM: embed {len(turns)} LoCoMo turns cold (texts/s)"
    print(f"{label:58s} {len(turns) / t_cold:14.1f}")
    print(f"{'MiniLM: the same texts from the cache (texts/s)':58s} {len(turns) / t_warm:14.1f}")

    cfg = work / "cfg.yaml"
    cfg.write_text(json.dumps({"datasets": {"longmemeval-s": {"kind": "longmemeval", "enabled": False},
                                            "locomo": {"kind": "locomo", "path": str(data / "locomo")},
                                            "procedural": {"kind": "procedural", "path": str(data / "procedural")}}}))
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(work / "wf"), "-n",
           "results/report.md", "--configfile", str(REPO / "config.yaml"), str(cfg)]
    t_dag, _ = timed(lambda: subprocess.run(cmd, capture_output=True))
    print(f"{'snakemake: dry run of the full DAG (s)':58s} {t_dag:14.2f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'peak memory of this process (MB)':58s} {peak:14.1f}")
    print(f"\n(work files in {work})")


if __name__ == "__main__":
    main()
