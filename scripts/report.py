"""Rule report: summary, tests, plots, normalisations and provenance -> results/report.md."""
from pathlib import Path

import pandas as pd

from membench.logs import log_to
from membench.report.build import ReportInputs, build_report

with log_to(snakemake.log[0]):
    inputs = ReportInputs(
        datasets=dict(snakemake.params.datasets), results_dir=Path("results"),
        summary=pd.read_parquet(snakemake.input.summary), significance=pd.read_parquet(snakemake.input.significance),
        runs=[tuple(r) for r in snakemake.params.runs], baseline=snakemake.params.baseline,
        config=dict(snakemake.params.config), bench_dir=Path("benchmarks"))
    build_report(inputs, Path(snakemake.output.report))
