"""Rule rank_part: one adapter over one contiguous part of a dataset's questions -> a part of the run."""

from __future__ import annotations

from membench.jobs.job import Job
from membench.runs.request import RunRequest
from membench.runs.sealing import SealRequest
from membench.stages.rank import run_part


def rule_rank_part(job: Job) -> None:
    """Rule rank_part: one contiguous part of the questions, for a sharded rank."""
    run_part(RunRequest.from_job(job), int(job.wildcards.part), job.params.parts, job.output.path("part"),
             SealRequest.from_job(job))
