"""Rule facts_llm: atomic facts per distinct session, extracted by the model (cached, budgeted)."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import facts

with log_to(snakemake.log[0]):
    facts.run(snakemake.params.kind, dict(snakemake.input.items()), Path(snakemake.output.facts),
              snakemake.params.config, Path(snakemake.params.cache), Path(snakemake.output.cost),
              dataset=snakemake.wildcards.dataset)
