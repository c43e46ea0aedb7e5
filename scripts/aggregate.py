"""Rule aggregate: one dataset's score files -> its summary (means, CIs) and significance (paired tests)."""
from pathlib import Path

from membench.analysis.aggregate import aggregate_datasets
from membench.io import atomic_write_parquet
from membench.logs import log_to

with log_to(snakemake.log[0]):
    p, dataset = snakemake.params, snakemake.wildcards.dataset
    files = [(d, a, Path(f)) for (d, a), f in zip(p.score_keys, snakemake.input.scores)]
    summary, significance = aggregate_datasets(files, {dataset: Path(snakemake.input.questions)}, {dataset: p.kind},
                                               p.baseline, p.resamples, p.seed, p.cluster, p.ablation)
    atomic_write_parquet(summary, Path(snakemake.output.summary))
    atomic_write_parquet(significance, Path(snakemake.output.significance))
