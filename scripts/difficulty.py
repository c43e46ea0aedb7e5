"""Rule difficulty: gold-side question features x per-question scores -> the miss-analysis table and plot."""
from pathlib import Path

import pandas as pd

from membench.io import atomic_write_parquet
from membench.logs import log_to
from membench.report.difficulty import difficulty_plot, difficulty_table, question_features

with log_to(snakemake.log[0]):
    i, p, w = snakemake.input, snakemake.params, snakemake.wildcards
    features = question_features(*(pd.read_parquet(f) for f in (i.questions, i.qrels, i.haystacks, i.turns)))
    scores = {a: pd.read_parquet(f) for a, f in zip(p.adapters, i.scores)}
    frame = difficulty_table(w.dataset, features, scores, p.breakdown)
    atomic_write_parquet(frame, Path(snakemake.output.table))
    difficulty_plot(frame, w.dataset, Path(snakemake.output.plot), "SUBSET RUN · " if p.subset else "")
