"""Rule facts_observation: LoCoMo's own observation facts as fact logs (zero model calls)."""
from pathlib import Path

from membench.datasets.locomo import find_file
from membench.logs import log_to
from membench.stages import facts

with log_to(snakemake.log[0]):
    facts.observations(find_file(Path(snakemake.params.source)), dict(snakemake.input.items()),
                       Path(snakemake.output[0]))
