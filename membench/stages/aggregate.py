"""aggregate and summary stages: one dataset's score files -> means, CIs and paired tests, and its wide per-question
table; then all datasets' tables concatenated into results/summary.parquet and significance.parquet (the formulas:
membench.analysis.aggregate)."""

from __future__ import annotations

import pandas as pd

from membench.analysis.aggregate import aggregate_datasets
from membench.io import atomic_write_parquet, read_table
from membench.jobs.job import Job
from membench.qa.baselines import QA_BASELINES
from membench.report.artifacts import per_question_frame, write_per_question


def rule_aggregate(job: Job) -> None:
    """Rule aggregate: one dataset's score files -> its summary and significance tables, and every run's
    per-question scores in one table (Parquet + CSV): both read the same files, so one job writes both."""
    p, dataset = job.params, job.wildcards.dataset
    files = [(d, a, read_table(f)) for (d, a), f in zip(p.score_keys, job.input.scores)]  # read once, used twice
    summary, significance = aggregate_datasets(files, {dataset: job.input.path("questions")}, {dataset: job.benchmark},
                                               p.baseline, p.resamples, p.seed, p.cluster, p.ablation,
                                               references=list(QA_BASELINES))
    atomic_write_parquet(summary, job.output.path("summary"))
    atomic_write_parquet(significance, job.output.path("significance"))
    by_run: dict[str, list[pd.DataFrame]] = {}
    for _, adapter, table in files:
        by_run.setdefault(adapter, []).append(table)
    write_per_question(per_question_frame(by_run), job.output.path("per_question"),
                       job.output.path("per_question_csv"), p.subset)
