"""Rule efficiency: one dataset's efficiency rows, run metadata and costs -> CIs, efficiency.json, the chart."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from membench.analysis.aggregate import aggregate_datasets
from membench.io import atomic_write_parquet, atomic_write_text
from membench.jobs.job import Job
from membench.report.efficiency import efficiency_record
from membench.report.efficiency_plot import efficiency_plot


def rule_efficiency(job: Job) -> None:
    """Rule efficiency: one dataset's efficiency rows -> means with CIs, efficiency.json and the charts."""
    p, dataset = job.params, job.wildcards.dataset
    files = [(dataset, run, Path(f)) for run, f in zip(p.runs, job.input.paths("rows"))]
    eff_summary, significance = aggregate_datasets(files, {dataset: job.input.path("questions")}, {dataset: job.benchmark},
                                                   p.baseline, p.resamples, p.seed, p.cluster, p.ablation)
    atomic_write_parquet(eff_summary, job.output.path("summary"))
    atomic_write_parquet(significance, job.output.path("significance"))
    metas = {run: json.loads(Path(f).read_text(encoding="utf-8")) for run, f in zip(p.runs, job.input.paths("metas"))}
    costs = {Path(f).stem.removeprefix("memory-"): json.loads(Path(f).read_text(encoding="utf-8"))
             for f in job.input.paths("costs")}
    record = efficiency_record(dataset, job.benchmark, metas, costs, pd.read_parquet(job.input.path("scores_summary")),
                               eff_summary)
    atomic_write_text(job.output.path("record"), json.dumps(record, indent=2, sort_keys=True) + "\n")
    efficiency_plot(record, job.output.path("plot"), "SUBSET RUN · " if p.subset else "")
