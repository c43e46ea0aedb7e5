"""Rule embedded: the embed shards that embedded a dataset's texts -> the marker its embedding runs' ranks wait for."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import embed_shards

with log_to(snakemake.log[0]):
    embed_shards.mark_embedded(snakemake.wildcards.dataset, [Path(p) for p in snakemake.input.shards],
                               Path(snakemake.output.marker))
