"""Rule embedded: the embed shards that embedded a dataset's texts -> the marker its embedding runs' ranks wait for."""
from membench.jobs.job import run_stage
from membench.stages import embedded

run_stage(snakemake, embedded.rule_embedded)
