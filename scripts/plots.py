"""Rule plots: a dataset's metric@k curves, per-group bars, miss analysis (table and plot) and efficiency (CIs,
efficiency.json, the chart)."""
from membench.runs.handoff import run_stage
from membench.stages import plots

run_stage(snakemake, plots.rule_plots)
