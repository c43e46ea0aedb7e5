"""Rule embed: one shard of the datasets' distinct texts -> vectors in the embedding cache (+ a manifest)."""
from membench.plumbing.job import run_stage
from membench.stages import embed_shards

run_stage(snakemake, embed_shards.rule_embed)
