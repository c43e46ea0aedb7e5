"""Rule score_published: a run scored on the evidence as published, for the questions an evidence erratum changed."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import score

with log_to(snakemake.log[0]):
    score.run_published(snakemake.params.kind, Path(snakemake.input.run), dict(snakemake.input.items()),
                        Path(snakemake.output.scores))
