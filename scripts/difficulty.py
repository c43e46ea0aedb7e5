"""Rule difficulty: gold-side question features x per-question scores -> the miss-analysis table and plot."""
from membench.jobs.job import run_stage
from membench.stages import difficulty

run_stage(snakemake, difficulty.rule_difficulty)
