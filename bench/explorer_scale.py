"""The explorer at LongMemEval-S scale (500 questions, ~20k sessions), where only the 2-question fragment is at hand.

    python bench/explorer_scale.py [results] [--copies 250] [--out /tmp/explorer-scale] then
    python bench/explorer.py /tmp/explorer-scale/explorer --dataset longmemeval-s-fragment \
        --metric session/recall_any@5 --a bm25 --b bm25-upstream

Builds an explorer with `membench.explorer.build.build_explorer` from a run's LongMemEval fragment outputs
repeated `--copies` times, every id suffixed with its copy number: real questions, transcripts, rankings and
scores, at the size of LongMemEval-S (the fragment's 2 questions hold 80 sessions and 805 turns). It measures the
page, not a figure: the leaderboard still shows the fragment's summary. Prints the sizes; times nothing itself.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pandas as pd

from membench.jobs.job import Job, Named
from membench.explorer.build import build_explorer

DATASET = "longmemeval-s-fragment"
IDS = ("question_id", "haystack_id", "session_key", "session_id", "item_id")  # suffixed per copy


def repeated(frame: pd.DataFrame, copies: int) -> pd.DataFrame:
    """`copies` copies of `frame`, each with its ids (and question index) made its own."""
    parts = []
    for c in range(copies):
        part = frame.copy()
        for column in IDS:
            if column in part:
                part[column] = part[column].astype(str) + f"~{c}"
        if "index" in part:
            part["index"] = part["index"] + c * len(frame)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="?", default="results", type=Path)
    ap.add_argument("--copies", type=int, default=250)
    ap.add_argument("--out", type=Path, default=Path("/tmp/explorer-scale"))
    args = ap.parse_args()
    source, work = args.results / DATASET, args.out / "inputs"
    shutil.rmtree(args.out, ignore_errors=True)
    work.mkdir(parents=True)
    files: dict[str, list[str]] = {}
    for table in ("questions", "turns", "qrels", "haystacks"):
        repeated(pd.read_parquet(source / f"{table}.parquet"), args.copies).to_parquet(work / f"{table}.parquet")
        files[table] = [str(work / f"{table}.parquet")]
    runs = sorted(p.stem for p in (source / "runs").glob("*.parquet"))
    for kind in ("scores", "runs"):
        (work / kind).mkdir()
        for run in runs:
            repeated(pd.read_parquet(source / kind / f"{run}.parquet"), args.copies).to_parquet(
                work / kind / f"{run}.parquet")
    job = Job(input=Named({
        "summary": str(args.results / "summary.json"), "significance": str(args.results / "significance.parquet"),
        **files, "scores": [str(work / "scores" / f"{r}.parquet") for r in runs],
        "ranked": [str(work / "runs" / f"{r}.parquet") for r in runs],
        "efficiency": [str(source / "efficiency" / "efficiency.json")], "qa": [], "calibration": []}),
        params=Named({"datasets": [DATASET], "runs": [(DATASET, r) for r in runs], "answered": [], "calibrated": [],
                      "baseline": "bm25"}))
    folder = args.out / "explorer"
    folder.mkdir()
    build_explorer(folder, job)
    questions = pd.read_parquet(work / "questions.parquet")
    haystacks = pd.read_parquet(work / "haystacks.parquet")
    data = folder / "data" / "d0.js"
    transcripts = sorted((folder / "data" / "d0").glob("*.js"))
    sizes = [p.stat().st_size for p in transcripts]
    print(f"{len(questions)} questions, {haystacks.session_key.nunique():,} sessions, "
          f"{len(pd.read_parquet(work / 'turns.parquet')):,} turns, {len(runs)} runs")
    print(f"data script {data.stat().st_size / 1e6:.1f} MB; {len(transcripts)} transcript scripts, "
          f"{sum(sizes) / 1e6:.1f} MB in all, {max(sizes) / 1e3:.0f} kB the largest (one loads per opened question)")


if __name__ == "__main__":
    main()
