"""Rule plots: the dataset's metric@k curves and per-group bars as PNGs."""
from pathlib import Path

import pandas as pd

from membench.logs import log_to
from membench.report.headlines import BREAKDOWN, CURVES
from membench.report.plots import curve_plot, group_plot

with log_to(snakemake.log[0]):
    summary, dataset, kind = pd.read_parquet(snakemake.input.summary), snakemake.wildcards.dataset, snakemake.params.kind
    note = "SUBSET RUN · " if snakemake.params.subset else ""
    curve_plot(summary, dataset, CURVES[kind], Path(snakemake.output.curve), note)
    group_plot(summary, dataset, BREAKDOWN[kind], Path(snakemake.output.groups), note)
