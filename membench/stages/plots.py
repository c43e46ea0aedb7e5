"""Rule plots: the dataset's metric@k curves and per-group bars as PNGs."""

from __future__ import annotations

import pandas as pd

from membench.jobs.job import Job
from membench.report.plots import curve_plot, group_plot


def rule_plots(job: Job) -> None:
    """Rule plots: a dataset's recall curve and group bars."""
    summary, dataset, p = pd.read_parquet(job.input.summary), job.wildcards.dataset, job.params
    note = "SUBSET RUN · " if p.subset else ""
    curve_plot(summary, dataset, p.curve, job.output.path("curve"), note)
    group_plot(summary, dataset, p.breakdown, job.output.path("groups"), note)
