"""Rule tables: summary, significance, gold counts, config and the embed jobs' manifests -> results/summary.json,
results/tables/*.tex, results/headline.txt."""
from membench.plumbing.job import run_stage
from membench.report import artifacts

run_stage(snakemake, artifacts.rule_tables)
