"""Rule tables: summary, significance, gold counts, config and the embed jobs' manifests -> results/summary.json,
results/tables/*.tex, results/headline.txt."""
from membench.runs.handoff import run_stage
from membench.stages import tables

run_stage(snakemake, tables.rule_tables)
