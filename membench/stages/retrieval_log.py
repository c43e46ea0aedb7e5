"""retrieval_log stage: a LongMemEval run and its scores -> upstream's retrieval log format
(membench.benchmarks.longmemeval.retrieval_log)."""

from __future__ import annotations

import pandas as pd

from membench.jobs.job import Job
from membench.benchmarks.longmemeval.retrieval_log import write_log
from membench.scoring.tables import Gold


def rule_retrieval_log(job: Job) -> None:
    """Rule retrieval_log: one run, one granularity -> one JSONL log."""
    write_log(pd.read_parquet(job.input.run), Gold.load(job.input.files()), pd.read_parquet(job.input.scores),
              job.wildcards.granularity, job.output.path("log"))
