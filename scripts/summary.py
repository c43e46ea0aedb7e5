"""Rule summary: every dataset's summary and significance tables -> one table each."""
from pathlib import Path

from membench.analysis.aggregate import SIGNIFICANCE_COLUMNS, SUMMARY_COLUMNS, concat_tables
from membench.io import atomic_write_parquet
from membench.logs import log_to

with log_to(snakemake.log[0]):
    given, out = snakemake.input, snakemake.output
    atomic_write_parquet(concat_tables(given.summaries, SUMMARY_COLUMNS), Path(out.summary))
    atomic_write_parquet(concat_tables(given.significance, SIGNIFICANCE_COLUMNS), Path(out.significance))
