"""Rule explorer: the run's outputs -> results/explorer/, an offline results explorer (index.html + data scripts)."""
from membench.jobs.job import run_stage
from membench.stages import explorer

run_stage(snakemake, explorer.rule_explorer)
