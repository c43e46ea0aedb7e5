"""Rule plots: a dataset's metric@k curves and per-group bars, its miss analysis (where runs miss, by question
difficulty: a table and a plot), as PNGs and Parquet, and its efficiency beside quality (membench.stages.efficiency)."""

from __future__ import annotations

import pandas as pd

from membench.io import atomic_write_parquet
from membench.jobs.job import Job
from membench.report.difficulty import difficulty_plot, difficulty_table, question_features
from membench.report.plots import curve_plot, group_plot
from membench.stages.efficiency import write_efficiency


def rule_plots(job: Job) -> None:
    """Rule plots: a dataset's recall curve and group bars, its difficulty table and plot, then its efficiency."""
    i, p, dataset = job.input, job.params, job.wildcards.dataset
    note = "SUBSET RUN · " if p.subset else ""
    summary = pd.read_parquet(i.summary)
    curve_plot(summary, dataset, p.curve, job.output.path("curve"), note)
    group_plot(summary, dataset, p.breakdown, job.output.path("groups"), note)
    features = question_features(*(pd.read_parquet(f) for f in (i.questions, i.qrels, i.haystacks, i.turns)))
    scores = {a: pd.read_parquet(f) for a, f in zip(p.runs, job.input.paths("scores"), strict=True)}
    frame = difficulty_table(dataset, features, scores, p.breakdown)
    atomic_write_parquet(frame, job.output.path("difficulty"))
    difficulty_plot(frame, dataset, job.output.path("difficulty_plot"), note)
    write_efficiency(job)
