"""The hand-off from a rule to its stage: the job read once, its benchmark records resolved once, then the stage.

A rule's params name a dataset's benchmark kind (`kind`) or every dataset's (`kinds`: dataset -> kind); this is
the one place, besides the registry itself, that turns those strings into `Benchmark` records, so a stage never
looks a benchmark up by name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from membench.benchmarks.registry import benchmark
from membench.jobs.job import Job
from membench.jobs.job import run_stage as job_run_stage


def resolve(job: Job) -> Job:
    """The job with `benchmark` (from `params.kind`) and `benchmarks` (from `params.kinds`) filled in."""
    p = job.params
    return replace(job, benchmark=benchmark(p["kind"]) if "kind" in p else None,
                   benchmarks={d: benchmark(k) for d, k in p["kinds"].items()} if "kinds" in p else {})


def run_stage(smk: Any, stage: Callable[[Job], Any], file_only: Sequence[str] = ()) -> Any:
    """The whole of a rule script: the job, read and resolved once, handed to its stage, which logs to the rule's
    log."""
    return job_run_stage(smk, lambda job: stage(resolve(job)), file_only)
