"""Rule score_extended: a run scored over the official labels plus the pooled judgments."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import judge

with log_to(snakemake.log[0]):
    judge.score(Path(snakemake.input.run), dict(snakemake.input.items()),
                [Path(p) for p in snakemake.input.judgments], Path(snakemake.output.scores))
