"""Rule rank: one adapter over one dataset -> run Parquet + TREC run + run metadata."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import rank

with log_to(snakemake.log[0]):
    out = snakemake.output
    rank.run(snakemake.params.kind, Path(snakemake.input.queries).parent.parent, snakemake.params.spec,
             dict(snakemake.params.adapter_params), snakemake.params.depth, Path(out.run), Path(out.trec),
             Path(out.meta), Path(snakemake.params.embeddings), snakemake.wildcards.adapter,
             Path(snakemake.input.facts[0]) if snakemake.input.facts else None)
