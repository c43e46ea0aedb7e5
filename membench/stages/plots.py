"""Rule plots: a dataset's metric@k curves and per-group bars, its miss analysis (where runs miss, by question
difficulty: a table and a plot), as PNGs and Parquet, and its efficiency beside quality (the `efficiency_*` outputs)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from membench.analysis.aggregate import aggregate_datasets
from membench.io import atomic_write_parquet, atomic_write_text
from membench.jobs.job import Job
from membench.report.difficulty import difficulty_plot, difficulty_table, question_features
from membench.report.efficiency import efficiency_record
from membench.report.efficiency_plot import efficiency_plot
from membench.report.plots import curve_plot, group_plot


def rule_plots(job: Job) -> None:
    """Rule plots: a dataset's recall curve and group bars, its difficulty table and plot, then its efficiency."""
    i, p, dataset = job.input, job.params, job.wildcards.dataset
    note = "SUBSET RUN · " if p.subset else ""
    summary = pd.read_parquet(i.summary)
    curve_plot(summary, dataset, p.curve, job.output.path("curve"), note)
    group_plot(summary, dataset, p.breakdown, job.output.path("groups"), note)
    features = question_features(*(pd.read_parquet(f) for f in (i.questions, i.qrels, i.haystacks, i.turns)))
    scores = {a: pd.read_parquet(f) for a, f in zip(p.runs, job.input.paths("scores"), strict=True)}
    frame = difficulty_table(dataset, features, scores, p.breakdown)
    atomic_write_parquet(frame, job.output.path("difficulty"))
    difficulty_plot(frame, dataset, job.output.path("difficulty_plot"), note)
    write_efficiency(job, summary, note)


def write_efficiency(job: Job, summary: pd.DataFrame, note: str) -> None:
    """One dataset's efficiency rows, run metadata and costs -> means with CIs, efficiency.json and the chart (the
    job's `efficiency_*` outputs), beside `summary`, the dataset's quality summary. In this job because a job of its
    own paid a fresh process and matplotlib's import for less than a second of work."""
    p, dataset = job.params, job.wildcards.dataset
    files = [(dataset, run, Path(f)) for run, f in zip(p.runs, job.input.paths("rows"))]
    eff_summary, significance = aggregate_datasets(files, {dataset: job.input.path("questions")}, {dataset: job.benchmark},
                                                   p.baseline, p.resamples, p.seed, p.cluster, p.ablation)
    atomic_write_parquet(eff_summary, job.output.path("efficiency_summary"))
    atomic_write_parquet(significance, job.output.path("efficiency_significance"))
    metas = {run: json.loads(Path(f).read_text(encoding="utf-8")) for run, f in zip(p.runs, job.input.paths("metas"))}
    costs = {Path(f).stem.removeprefix("memory-"): json.loads(Path(f).read_text(encoding="utf-8"))
             for f in job.input.paths("costs")}
    record = efficiency_record(dataset, job.benchmark, metas, costs, summary, eff_summary)
    atomic_write_text(job.output.path("efficiency_record"), json.dumps(record, indent=2, sort_keys=True) + "\n")
    efficiency_plot(record, job.output.path("efficiency_plot"), note)
