"""Rule aggregate: one dataset's score files -> its summary (means, CIs), significance (paired tests) and per-question
table."""
from membench.runs.handoff import run_stage
from membench.stages import aggregate

run_stage(snakemake, aggregate.rule_aggregate)
