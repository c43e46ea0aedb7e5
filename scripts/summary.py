"""Rule summary: every dataset's summary and significance tables -> one table each."""
from membench.jobs.job import run_stage
from membench.stages import summary

run_stage(snakemake, summary.rule_summary)
