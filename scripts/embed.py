"""Rule embed: one shard of the datasets' distinct texts -> vectors in the embedding cache (+ a manifest)."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import embed_shards

with log_to(snakemake.log[0]):
    embed_shards.embed_shard([Path(p) for p in snakemake.input.texts], int(snakemake.wildcards.shard),
                             snakemake.params.shards, Path(snakemake.params.cache), Path(snakemake.output.manifest),
                             {**snakemake.params.options, "threads": snakemake.threads})
