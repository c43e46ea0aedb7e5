"""Rule facts_observation: LoCoMo's own observation facts as fact logs (zero model calls)."""

from __future__ import annotations

from pathlib import Path

from membench.benchmarks.locomo.parse import find_file
from membench.jobs.job import Job
from membench.stages.facts_llm import observations


def rule_facts_observation(job: Job) -> None:
    """Rule facts_observation: LoCoMo's own observations -> fact logs."""
    observations(find_file(Path(job.params.source)), job.input.files(), Path(job.output.every[0]))
