"""ingest stage: the parsed tables -> session logs and the gold-free view (membench.sessions.ingest)."""

from __future__ import annotations

import logging

from membench.plumbing.job import Job
from membench.sessions.ingest import ingest

log = logging.getLogger("membench")


def rule_ingest(job: Job) -> None:
    """Rule ingest: one dataset's tables -> its session logs, view and id maps."""
    done = ingest(job.input.files(), job.output.files(), job.params.units)
    log.info("ingested %s", done)
