"""Rule summary: every dataset's summary and significance tables -> one table each."""

from __future__ import annotations

from membench.analysis.aggregate import SIGNIFICANCE_COLUMNS, SUMMARY_COLUMNS, concat_tables
from membench.io import atomic_write_parquet
from membench.jobs.job import Job


def rule_summary(job: Job) -> None:
    """Rule summary: every dataset's tables in one summary and one significance table."""
    atomic_write_parquet(concat_tables(job.input.summaries, SUMMARY_COLUMNS), job.output.path("summary"))
    atomic_write_parquet(concat_tables(job.input.significance, SIGNIFICANCE_COLUMNS), job.output.path("significance"))
