"""Rule score_published: a run scored on the evidence as published, for the questions an evidence erratum changed."""

from __future__ import annotations

from membench.jobs.job import Job
from membench.stages.score import run_published


def rule_score_published(job: Job) -> None:
    """Rule score_published: a run scored by the protocol of a published figure."""
    run_published(job.benchmark, job.input.path("run"), job.input.files(), job.output.path("scores"))
