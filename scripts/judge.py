"""Rule judge: grade the unlabelled trajectories in a run's top k (Procedural)."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import judge

with log_to(snakemake.log[0]):
    judge.run(dict(snakemake.input.items()), Path(snakemake.input.run), Path(snakemake.output.judgments),
              snakemake.params.config, Path(snakemake.params.cache), Path(snakemake.output.cost),
              dataset=snakemake.wildcards.dataset, adapter=snakemake.wildcards.adapter)
