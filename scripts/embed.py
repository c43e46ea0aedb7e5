"""Rule embed: one shard of the datasets' distinct texts -> vectors in the embedding cache (+ a manifest)."""
from membench.jobs.job import run_stage
from membench.stages import embed

run_stage(snakemake, embed.rule_embed)
