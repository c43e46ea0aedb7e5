"""Rule report: summary, tests, plots, model stages, normalisations and provenance -> results/report.md."""
from pathlib import Path

import pandas as pd

from membench.logs import log_to
from membench.report.build import ReportInputs, build_report
from membench.report.memory import memory_section
from membench.report.model_stages import model_stages_markdown

with log_to(snakemake.log[0]):
    i, p = snakemake.input, snakemake.params
    judged = [tuple(k) for k in p.judged]
    models = model_stages_markdown(
        qa=dict(zip([tuple(k) for k in p.answered], i.qa)), calibration=dict(zip(p.calibrated, i.calibration)),
        judge={k: (o, e) for k, o, e in zip(judged, i.official, i.extended)},
        judgments=dict(zip(judged, i.judgments)), costs=list(i.costs),
        resamples=p.config["report"]["bootstrap_resamples"], seed=p.config["report"]["seed"])
    inputs = ReportInputs(
        datasets=dict(p.datasets), results_dir=Path("results"), summary=pd.read_parquet(i.summary),
        significance=pd.read_parquet(i.significance), runs=[tuple(r) for r in p.runs], baseline=p.baseline,
        config=dict(p.config), bench_dir=Path("benchmarks"),
        extra_sections=["## Model-call stages\n\n" + models, memory_section(Path("results"), [tuple(r) for r in p.runs])])
    build_report(inputs, Path(snakemake.output.report))
