"""Rule qa_calibration: grade probes of known correctness with the QA judge (LongMemEval, LoCoMo)."""
from pathlib import Path

from membench.logs import log_to
from membench.stages import calibration

with log_to(snakemake.log[0]):
    calibration.run(snakemake.params.kind, dict(snakemake.input.items()), Path(snakemake.output.probes),
                    snakemake.params.config, Path(snakemake.params.cache), Path(snakemake.output.cost),
                    dataset=snakemake.wildcards.dataset)
