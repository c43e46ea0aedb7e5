"""Rule score_extended: a run scored over the official labels plus the pooled judgments."""

from __future__ import annotations

from membench.jobs.job import Job
from membench.stages.judge import score


def rule_score_extended(job: Job) -> None:
    """Rule score_extended: a run scored with the official labels plus the judge's grades."""
    score(job.input.path("run"), job.input.files(), job.input.paths("judgments"), job.output.path("scores"))
