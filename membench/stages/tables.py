"""Rule tables: summary, significance, gold counts, config and the embed jobs' manifests -> summary.json, LaTeX tables and the console table."""

from __future__ import annotations

import pandas as pd

from membench.jobs.job import Job
from membench.report.artifacts import write_artifacts


def rule_tables(job: Job) -> None:
    """Rule tables: summary.json, results/tables/*.tex, results/headline.txt."""
    i, o, p = job.input, job.output, job.params
    write_artifacts(pd.read_parquet(i.summary), pd.read_parquet(i.significance), job.benchmarks, p.baseline,
                    o.path("summary"), dict(zip(job.benchmarks, o.tables)), o.path("headline"), p.subset, p.ablation,
                    dict(zip(job.benchmarks, i.normalization)), p.config, i.paths("manifests"), i.paths("efficiency"))
