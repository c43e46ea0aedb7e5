"""Rule embedded: the embed shards that embedded a dataset's texts -> the marker its embedding runs' ranks wait for."""

from __future__ import annotations

from membench.jobs.job import Job
from membench.stages.embed import mark_embedded


def rule_embedded(job: Job) -> None:
    """Rule embedded: the shards that embedded a dataset's texts -> the marker its embedding runs' ranks wait for."""
    mark_embedded(job.wildcards.dataset, job.input.paths("shards"), job.output.path("marker"))
