"""Rule difficulty: gold-side question features x per-question scores -> the miss-analysis table and plot."""

from __future__ import annotations

import pandas as pd

from membench.io import atomic_write_parquet
from membench.jobs.job import Job
from membench.report.difficulty import difficulty_plot, difficulty_table, question_features


def rule_difficulty(job: Job) -> None:
    """Rule difficulty: where adapters miss, by question difficulty (table + plot)."""
    i, p, dataset = job.input, job.params, job.wildcards.dataset
    features = question_features(*(pd.read_parquet(f) for f in (i.questions, i.qrels, i.haystacks, i.turns)))
    scores = {a: pd.read_parquet(f) for a, f in zip(p.adapters, i.scores)}
    frame = difficulty_table(dataset, features, scores, p.breakdown)
    atomic_write_parquet(frame, job.output.path("table"))
    difficulty_plot(frame, dataset, job.output.path("plot"), "SUBSET RUN · " if p.subset else "")
