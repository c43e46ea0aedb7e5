"""Rule embed_texts: a dataset's embedding runs -> the distinct texts they embed (+ a count summary)."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import embed

with log_to(snakemake.log[0]):
    embed.collect(snakemake.params.kind, dict(snakemake.input.items()), list(snakemake.params.runs),
                  Path(snakemake.output.texts), Path(snakemake.output.summary), dict(snakemake.params.options))
