"""Rule tables: summary, significance, gold counts, config and the embed jobs' manifests -> results/summary.json,
results/tables/*.tex, results/headline.txt."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.runs.handoff import run_stage  # noqa: E402
from membench.stages import tables  # noqa: E402

run_stage(snakemake, tables.rule_tables)
