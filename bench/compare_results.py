"""Compare two results folders file by file: which run and score files are byte-identical, and for run files
that are not, whether the rankings are the same and how far the scores moved. Prints; asserts nothing.

    python bench/compare_results.py BEFORE/results AFTER/results
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def compare_run(a: Path, b: Path) -> str:
    x, y = pd.read_parquet(a), pd.read_parquet(b)
    if len(x) != len(y):
        return f"rows {len(x)} vs {len(y)}"
    keys = ["question_id", "granularity", "rank", "item_id"]
    same_order = x[keys].reset_index(drop=True).equals(y[keys].reset_index(drop=True))
    moved = (x.score - y.score).abs().max()
    return f"ranking {'identical' if same_order else 'DIFFERENT'}, max |score change| {moved:.2e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    patterns = ["*/runs/*.parquet", "*/runs/*.trec", "*/runs/*.jsonl", "*/scores/*.parquet"]
    same = differ = missing = 0
    for pattern in patterns:
        for old in sorted(args.before.glob(pattern)):
            new = args.after / old.relative_to(args.before)
            if not new.exists():
                missing += 1
                print(f"missing  {new}")
            elif old.read_bytes() == new.read_bytes():
                same += 1
            else:
                differ += 1
                detail = compare_run(old, new) if old.suffix == ".parquet" and "/runs/" in old.as_posix() else ""
                print(f"differs  {old.relative_to(args.before)}  {detail}")
    print(f"{same} byte-identical, {differ} different, {missing} missing")


if __name__ == "__main__":
    main()
