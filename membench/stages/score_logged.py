"""score_logged stage: rule score's work, plus the run in its benchmark's own retrieval-log format (LongMemEval's:
membench.benchmarks.longmemeval.retrieval_log), one log per granularity. One job rather than three: the logs read
the same run, gold and scores, and a job's start-up costs more than writing them."""

from __future__ import annotations

import pandas as pd

from membench.benchmarks.longmemeval.retrieval_log import write_log
from membench.jobs.job import Job
from membench.scoring.tables import Gold
from membench.stages import score


def rule_score_logged(job: Job) -> None:
    """Rule score_logged: a run -> its scores and efficiency rows (as rule score), then one JSONL log per granularity
    (the rule's `logs`, in the benchmark's granularity order)."""
    scores = score.rule_score(job)
    ranking, gold = pd.read_parquet(job.input.run), Gold.load(job.input.files())
    for granularity, out in zip(job.benchmark.granularities, job.output.paths("logs"), strict=True):
        write_log(ranking, gold, scores, granularity, out)
