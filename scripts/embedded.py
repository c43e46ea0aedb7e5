"""Rule embedded: the embed shards that embedded a dataset's texts -> the marker its embedding runs' ranks wait for."""
from membench.plumbing.job import run_stage
from membench.stages import embed_shards

run_stage(snakemake, embed_shards.rule_embedded)
