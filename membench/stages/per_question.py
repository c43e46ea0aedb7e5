"""Rule per_question: a dataset's score files -> one wide per-question table, as Parquet and CSV."""

from __future__ import annotations

from pathlib import Path

from membench.jobs.job import Job
from membench.report.artifacts import per_question_frame, write_per_question


def rule_per_question(job: Job) -> None:
    """Rule per_question: every run's per-question scores in one table (Parquet + CSV)."""
    files: dict[str, list[Path]] = {}
    for adapter, path in zip(job.params.adapters, job.input.scores):
        files.setdefault(adapter, []).append(Path(path))
    write_per_question(per_question_frame(files), job.output.path("parquet"), job.output.path("csv"),
                       job.params.subset)
