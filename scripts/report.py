"""Rule report: gather every dataset's outputs into results/report.md."""
from pathlib import Path

from membench.logs import log_to
from membench.report.build import build_report

with log_to(snakemake.log[0]):
    build_report(snakemake.params.datasets, snakemake.input.normalization, Path(snakemake.output.report))
