"""Rule aggregate: one dataset's score files -> its summary (means, CIs), significance (paired tests) and per-question
table."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.runs.handoff import run_stage  # noqa: E402
from membench.stages import aggregate  # noqa: E402

run_stage(snakemake, aggregate.rule_aggregate)
