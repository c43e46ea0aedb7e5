"""Rule parse: native benchmark files -> results/{dataset}/*.parquet + normalization.json."""
from membench.runs.handoff import run_stage
from membench.stages import parse

run_stage(snakemake, parse.rule_parse)
