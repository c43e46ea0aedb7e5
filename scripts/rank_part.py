"""Rule rank_part: one adapter over one contiguous part of a dataset's questions -> a part of the run."""
import os

os.environ.setdefault("OMP_NUM_THREADS", str(snakemake.threads))  # an embedding miss keeps to `threads:`

from pathlib import Path  # noqa: E402

from membench.logs import log_to  # noqa: E402
from membench.stages import rank  # noqa: E402

with log_to(snakemake.log[0]):
    given, params = snakemake.input, snakemake.params
    rank.run_part(params.kind, dict(given.items()), params.spec, dict(params.adapter_params),
                  params.depth, int(snakemake.wildcards.part), params.parts, Path(snakemake.output.part),
                  Path(params.embeddings), Path(given.facts[0]) if given.facts else None,
                  dict(params.embedding_options))
