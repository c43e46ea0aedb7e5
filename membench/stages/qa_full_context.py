"""Rule qa_full_context: every QA question answered from its whole history (the upper reference)."""

from __future__ import annotations

from pathlib import Path

from membench.jobs.job import Job
from membench.runs.plan import FULL_CONTEXT
from membench.stages.qa import run


def rule_qa_full_context(job: Job) -> None:
    """Rule qa_full_context: the upper reference, every question answered from its whole history."""
    p, out = job.params, job.output
    run(job.benchmark, job.input.files(), None, out.path("qa"), out.path("scores"), p.config, Path(p.cache),
        out.path("cost"), dataset=job.wildcards.dataset, adapter=FULL_CONTEXT)
