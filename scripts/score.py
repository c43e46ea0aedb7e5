"""Rule score: run + gold tables -> per-question metric rows."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import score

with log_to(snakemake.log[0]):
    score.run(snakemake.params.kind, Path(snakemake.input.run), dict(snakemake.input.items()),
              Path(snakemake.output.scores))
