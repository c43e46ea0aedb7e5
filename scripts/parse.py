"""Rule parse: native benchmark files -> results/{dataset}/*.parquet + normalization.json."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import parse

with log_to(snakemake.log[0]):
    parse.run(snakemake.params.kind, Path(snakemake.params.source), dict(snakemake.output.items()),
              snakemake.params.errata, snakemake.params.subset, snakemake.params.category_names,
              snakemake.params.sha256)
