"""Rule parse: native benchmark files -> results/{dataset}/*.parquet + normalization.json."""
from membench.jobs.job import run_stage
from membench.stages import parse

run_stage(snakemake, parse.rule_parse)
