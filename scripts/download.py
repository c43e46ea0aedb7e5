"""Rule download: fetch a dataset's files with retries and checksum checks into resources/{dataset}."""
from pathlib import Path

from membench.fetch.download import materialize
from membench.logs import log_to

with log_to(snakemake.log[0]):
    materialize(snakemake.wildcards.dataset, dict(snakemake.params.spec), Path(snakemake.output[0]),
                retries=snakemake.params.retries, timeout=snakemake.params.timeout)
