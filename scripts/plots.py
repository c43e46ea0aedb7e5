"""Rule plots: a dataset's metric@k curves, per-group bars and miss analysis (table and plot)."""
from membench.jobs.job import run_stage
from membench.stages import plots

run_stage(snakemake, plots.rule_plots)
