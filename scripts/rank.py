"""Rule rank: one adapter over one dataset (or its merged rank_part shards) -> run Parquet + TREC + metadata."""
import os

os.environ.setdefault("OMP_NUM_THREADS", str(snakemake.threads))  # an embedding miss keeps to `threads:`

from pathlib import Path  # noqa: E402

from membench.logs import log_to  # noqa: E402
from membench.stages import rank  # noqa: E402

with log_to(snakemake.log[0]):
    out, given, params = snakemake.output, snakemake.input, snakemake.params
    rank.run(params.kind, dict(given.items()), params.spec, dict(params.adapter_params), params.depth,
             Path(out.run), Path(out.trec), Path(out.meta), Path(params.embeddings), snakemake.wildcards.adapter,
             Path(given.facts[0]) if given.facts else None, dict(params.embedding_options),
             [Path(p) for p in given.parts])
