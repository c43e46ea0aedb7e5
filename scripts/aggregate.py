"""Rule aggregate: every score file -> summary (means, CIs) and significance (paired tests vs baseline)."""
from pathlib import Path

from membench.aggregate import aggregate_datasets
from membench.io import atomic_write_parquet
from membench.logs import log_to

with log_to(snakemake.log[0]):
    p = snakemake.params
    files = [(d, a, Path(f)) for (d, a), f in zip(p.score_keys, snakemake.input.scores)]
    questions = {d: Path(f) for d, f in zip(p.kinds, snakemake.input.questions)}
    summary, significance = aggregate_datasets(files, questions, p.kinds, p.baseline, p.resamples, p.seed, p.cluster,
                                             p.ablation)
    atomic_write_parquet(summary, Path(snakemake.output.summary))
    atomic_write_parquet(significance, Path(snakemake.output.significance))
