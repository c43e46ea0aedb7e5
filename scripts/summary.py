"""Rule summary: every dataset's summary and significance tables -> one table each."""
from membench.plumbing.job import run_stage
from membench.stages import aggregate

run_stage(snakemake, aggregate.rule_summary)
