"""Rule plots: the dataset's metric@k curves and per-group bars as PNGs."""
from membench.plumbing.job import run_stage
from membench.report import plots

run_stage(snakemake, plots.rule_plots)
