"""Rule plots: the dataset's metric@k curves and per-group bars as PNGs."""
from membench.jobs.job import run_stage
from membench.stages import plots

run_stage(snakemake, plots.rule_plots)
