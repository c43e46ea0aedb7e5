"""How often a near-tie decides a position in a results folder's rankings: the exposure of its figures to last-bit noise.

For every run file and question, each adjacent pair of the top `--top` positions (rank r against r + 1) is counted
by its score gap: an exact tie (0, decided by the documented tie rule, so not noise), or a gap below each threshold.
A near-tie between items of different relevance could move a rank-sensitive figure if swapped (nDCG, AP, MRR:
`differ`); one that also straddles a cut-off k (r = k) would move a set figure such as recall@k (`cut-off`).
Scores are read from the run files (float64, as ranked).

    python bench/near_ties.py results [--adapters dense hybrid] [--top 10] [--thresholds 1e-6 1e-5]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

CUTOFFS = (1, 3, 5, 10, 25, 30, 50)  # every k a built-in benchmark scores at


def near_ties(run: pd.DataFrame, qrels: pd.DataFrame, thresholds=(1e-6, 1e-5), top: int = 10,
              cutoffs=CUTOFFS) -> dict[str, int]:
    """Counts over one run: `pairs` (adjacent pairs looked at), `ties` (gap 0), and per threshold t `below t`
    (0 < gap < t), `differ t` (those between items of different relevance) and `cut-off t` (those of them at a
    cut-off)."""
    relevance = {(q, g, i): r for q, i, g, r in qrels[["question_id", "item_id", "granularity", "relevance"]]
                 .itertuples(index=False)}
    counts = {"pairs": 0, "ties": 0}
    for t in thresholds:
        counts.update({f"below {t:g}": 0, f"differ {t:g}": 0, f"cut-off {t:g}": 0})
    ordered = run.sort_values(["granularity", "question_id", "rank"], kind="stable")
    for (granularity, question), rows in ordered.groupby(["granularity", "question_id"], sort=False):
        scores, items = rows.score.to_numpy()[:top + 1], rows.item_id.tolist()[:top + 1]
        gaps = scores[:-1] - scores[1:]
        counts["pairs"] += len(gaps)
        counts["ties"] += int((gaps == 0).sum())
        for r, gap in enumerate(gaps, 1):
            if gap == 0:
                continue
            for t in thresholds:
                if gap < t:
                    counts[f"below {t:g}"] += 1
                    differ = relevance.get((question, granularity, items[r - 1]), 0) != \
                        relevance.get((question, granularity, items[r]), 0)
                    counts[f"differ {t:g}"] += int(differ)
                    counts[f"cut-off {t:g}"] += int(r in cutoffs and differ)
    return counts


def folder_table(results: Path, adapters: list[str] | None, thresholds, top: int) -> pd.DataFrame:
    rows = []
    for run_path in sorted(results.glob("*/runs/*.parquet")):
        dataset, adapter = run_path.parent.parent.name, run_path.stem
        if adapters and adapter not in adapters:
            continue
        run = pd.read_parquet(run_path)
        qrels = pd.read_parquet(run_path.parent.parent / "qrels.parquet")
        rows.append({"dataset": dataset, "adapter": adapter, "questions": run.question_id.nunique(),
                     **near_ties(run, qrels, thresholds, top)})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--adapters", nargs="*")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--thresholds", nargs="*", type=float, default=[1e-6, 1e-5])
    args = parser.parse_args()
    table = folder_table(args.results, args.adapters, args.thresholds, args.top)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(table.to_string(index=False))
        print(table.drop(columns=["dataset", "adapter"]).sum().to_string())


if __name__ == "__main__":
    main()
