"""Wall time of `aggregate` (10,000 resamples, every split and group) on score files shaped like a full run.

    python bench/aggregate_speed.py [--adapters 12] [--resamples 10000]

Synthetic scores (never reported as results): LoCoMo-shaped (1,986 questions in 10 conversations, 5 types,
5 metrics), Procedural-shaped (40 queries, 3 tiers, 39 metrics) and LongMemEval-S-shaped (500 questions,
6 types, 54 metrics), each for `--adapters` adapters. Prints wall and CPU seconds (on a shared machine CPU is the fairer figure) and the rows; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from membench.analysis.aggregate import Resampling, aggregate  # noqa: E402

SHAPES = {"locomo": (1986, 5, 5, None), "procedural": (40, 6, 39, 3), "longmemeval-s": (500, 6, 54, None)}


def write_scores(folder: Path, adapters: int, seed: int = 0) -> list[tuple[str, str, Path]]:
    rng = np.random.default_rng(seed)
    files = []
    for dataset, (n, types, metrics, tiers) in SHAPES.items():
        qids = [f"{dataset}-q{i}" for i in range(n)]
        for a in range(adapters):
            frame = pd.DataFrame({
                "question_id": np.repeat(qids, metrics), "metric": np.tile([f"m{j}@5" for j in range(metrics)], n),
                "value": rng.random(n * metrics).round(2),
                "split": np.repeat(np.where(np.arange(n) % 2, "holdout", "tune"), metrics),
                "question_type": np.repeat([f"t{i % types}" for i in range(n)], metrics),
                "tier": np.repeat([f"T{i % tiers}" if tiers else None for i in range(n)], metrics), "skip": None})
            path = folder / f"{dataset}-{a}.parquet"
            frame.astype({"tier": "string", "skip": "string"}).to_parquet(path)
            files.append((dataset, f"adapter{a}", path))
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapters", type=int, default=12)
    parser.add_argument("--resamples", type=int, default=10000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = write_scores(Path(tmp), args.adapters)
        clusters = pd.Series({f"locomo-q{i}": f"c{i % 10}" for i in range(1986)})
        start, cpu = time.perf_counter(), time.process_time()
        summary, significance = aggregate(files, "adapter0", args.resamples, 0,
                                          {"locomo": Resampling("conversation", clusters)})
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"aggregate: {seconds:.1f} s wall, {cpu:.1f} s CPU for {len(summary):,} summary rows and {len(significance):,} paired tests "
          f"({args.adapters} adapters x 3 datasets, {args.resamples:,} resamples)")


if __name__ == "__main__":
    main()
