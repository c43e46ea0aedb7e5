"""download stage: a dataset's files fetched (retries, sha256 check, safe extraction: membench.fetch.download)."""

from __future__ import annotations

from pathlib import Path

from membench.fetch.download import materialize
from membench.jobs.job import Job


def rule_download(job: Job) -> None:
    """Rule download: a dataset's `url`/`files` -> its folder under resources/."""
    materialize(job.wildcards.dataset, dict(job.params.spec), Path(job.output.every[0]),
                retries=job.params.retries, timeout=job.params.timeout)
