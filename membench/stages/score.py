"""score stage: a run + the dataset's gold tables -> one row per question x metric."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from membench.benchmarks.registry import benchmark
from membench.io import atomic_write_parquet
from membench.scoring.tables import Gold

log = logging.getLogger(__name__)


def run(kind: str, run_path: Path, tables: Path | Mapping[str, Path], out: Path) -> pd.DataFrame:
    """Score the run over the gold ``tables`` (their paths, or the dataset folder)."""
    ranking = pd.read_parquet(run_path)
    gold = Gold.load(tables)
    scores = benchmark(kind).score(ranking, gold)
    atomic_write_parquet(scores, out)
    counted = scores[scores.skip.isna()]
    log.info("%s: %d questions scored, %d skipped", run_path, counted.question_id.nunique(),
             scores[scores.skip.notna()].question_id.nunique())
    return scores
