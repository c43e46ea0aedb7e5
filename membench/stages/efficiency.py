"""A dataset's efficiency: its runs' efficiency rows, run metadata and costs -> CIs, efficiency.json, the chart.
Written by rule plots' job (membench.stages.plots), which draws the dataset's other charts: a job of its own paid a
fresh process and matplotlib's import for less than a second of work."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from membench.analysis.aggregate import aggregate_datasets
from membench.io import atomic_write_parquet, atomic_write_text
from membench.jobs.job import Job
from membench.report.efficiency import efficiency_record
from membench.report.efficiency_plot import efficiency_plot


def write_efficiency(job: Job) -> None:
    """One dataset's efficiency rows -> means with CIs, efficiency.json and the chart (the job's `efficiency_*`
    outputs; its input `summary` is the dataset's quality summary)."""
    p, dataset = job.params, job.wildcards.dataset
    files = [(dataset, run, Path(f)) for run, f in zip(p.runs, job.input.paths("rows"))]
    eff_summary, significance = aggregate_datasets(files, {dataset: job.input.path("questions")}, {dataset: job.benchmark},
                                                   p.baseline, p.resamples, p.seed, p.cluster, p.ablation)
    atomic_write_parquet(eff_summary, job.output.path("efficiency_summary"))
    atomic_write_parquet(significance, job.output.path("efficiency_significance"))
    metas = {run: json.loads(Path(f).read_text(encoding="utf-8")) for run, f in zip(p.runs, job.input.paths("metas"))}
    costs = {Path(f).stem.removeprefix("memory-"): json.loads(Path(f).read_text(encoding="utf-8"))
             for f in job.input.paths("costs")}
    record = efficiency_record(dataset, job.benchmark, metas, costs, pd.read_parquet(job.input.path("summary")),
                               eff_summary)
    atomic_write_text(job.output.path("efficiency_record"), json.dumps(record, indent=2, sort_keys=True) + "\n")
    efficiency_plot(record, job.output.path("efficiency_plot"), "SUBSET RUN · " if p.subset else "")
