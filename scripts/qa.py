"""Rule qa: answer from a run's top k and judge each answer (LongMemEval, LoCoMo)."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import qa

with log_to(snakemake.log[0]):
    qa.run(snakemake.params.kind, dict(snakemake.input.items()), Path(snakemake.input.run),
           Path(snakemake.output.qa), Path(snakemake.output.scores), snakemake.params.config,
           Path(snakemake.params.cache), Path(snakemake.output.cost), dataset=snakemake.wildcards.dataset,
           adapter=snakemake.wildcards.adapter)
