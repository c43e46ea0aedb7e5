"""Rule qa_baseline: every QA question answered from a reference context, as the run named by the baseline:
`full-context` (the whole history, the papers' upper reference), `no-memory` (the question alone) or `oracle`
(only the sessions holding the gold evidence). See :func:`membench.stages.qa.run`."""

from __future__ import annotations

from pathlib import Path

from membench.jobs.job import Job
from membench.stages.qa import run


def rule_qa_baseline(job: Job) -> None:
    """Rule qa_baseline: one QA baseline on one dataset."""
    p, out = job.params, job.output
    run(job.benchmark, job.input.files(), None, out.path("qa"), out.path("scores"), p.config, Path(p.cache),
        out.path("cost"), dataset=job.wildcards.dataset, adapter=job.wildcards.baseline,
        baseline=job.wildcards.baseline)
