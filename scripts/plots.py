"""Rule plots: the dataset's metric@k curves and per-group bars as PNGs."""
from pathlib import Path

import pandas as pd

from membench.logs import log_to
from membench.report.plots import curve_plot, group_plot

with log_to(snakemake.log[0]):
    summary, dataset, p = pd.read_parquet(snakemake.input.summary), snakemake.wildcards.dataset, snakemake.params
    note = "SUBSET RUN · " if p.subset else ""
    curve_plot(summary, dataset, p.curve, Path(snakemake.output.curve), note)
    group_plot(summary, dataset, p.breakdown, Path(snakemake.output.groups), note)
