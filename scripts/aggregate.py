"""Rule aggregate: every score file -> summary (means, CIs) and significance (paired tests vs baseline)."""
from pathlib import Path

from membench.aggregate import aggregate
from membench.io import atomic_write_parquet
from membench.logs import log_to

with log_to(snakemake.log[0]):
    files = [(d, a, Path(p)) for (d, a), p in zip(snakemake.params.score_keys, snakemake.input.scores)]
    summary, significance = aggregate(files, snakemake.params.baseline, snakemake.params.resamples,
                                      snakemake.params.seed)
    atomic_write_parquet(summary, Path(snakemake.output.summary))
    atomic_write_parquet(significance, Path(snakemake.output.significance))
