"""Rule rank: one adapter over one dataset -> run Parquet + TREC run + run metadata."""
import os

os.environ.setdefault("OMP_NUM_THREADS", str(snakemake.threads))  # the embedding model keeps to `threads:`

from pathlib import Path  # noqa: E402

from membench.logs import log_to  # noqa: E402
from membench.stages import rank  # noqa: E402

with log_to(snakemake.log[0]):
    out = snakemake.output
    rank.run(snakemake.params.kind, Path(snakemake.input.queries).parent.parent, snakemake.params.spec,
             dict(snakemake.params.adapter_params), snakemake.params.depth, Path(out.run), Path(out.trec),
             Path(out.meta), Path(snakemake.params.embeddings), snakemake.wildcards.adapter,
             Path(snakemake.input.facts[0]) if snakemake.input.facts else None)
