"""Rule tables: summary, significance, gold counts, config and the embed jobs' manifests -> results/summary.json,
results/tables/*.tex, results/headline.txt."""
from pathlib import Path

import pandas as pd

from membench.logs import log_to
from membench.report.artifacts import write_artifacts

with log_to(snakemake.log[0]):
    i, o, p = snakemake.input, snakemake.output, snakemake.params
    write_artifacts(pd.read_parquet(i.summary), pd.read_parquet(i.significance), p.kinds, p.baseline,
                    Path(o.summary), dict(zip(p.kinds, o.tables)),
                    Path(o.headline), p.subset, p.ablation, dict(zip(p.kinds, i.normalization)), p.config,
                    [Path(m) for m in i.manifests])
