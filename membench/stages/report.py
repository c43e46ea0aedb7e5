"""Rule report: summary, tests, plots, model stages, normalisations and provenance -> results/report.md."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from membench.jobs.job import Job
from membench.report.build import ReportInputs, build_report
from membench.report.efficiency import efficiency_section
from membench.report.memory import memory_section
from membench.report.model_stages import model_stages_markdown


def rule_report(job: Job) -> None:
    """Rule report: summary, tests, plots, model stages, normalisations and provenance -> results/report.md."""
    i, p = job.input, job.params
    judged = [tuple(k) for k in p.judged]
    models = model_stages_markdown(
        qa=dict(zip([tuple(k) for k in p.answered], i.qa)), calibration=dict(zip(p.calibrated, i.calibration)),
        judge={k: (o, e) for k, o, e in zip(judged, i.official, i.extended)},
        judgments=dict(zip(judged, i.judgments)), costs=list(i.costs),
        resamples=p.config["report"]["bootstrap_resamples"], seed=p.config["report"]["seed"])
    runs = [tuple(r) for r in p.runs]
    inputs = ReportInputs(
        datasets=dict(job.benchmarks), results_dir=Path("results"), summary=pd.read_parquet(i.summary),
        significance=pd.read_parquet(i.significance), runs=runs, baseline=p.baseline,
        config=dict(p.config), bench_dir=Path("benchmarks"),
        extra_sections=["## Model-call stages\n\n" + models, memory_section(Path("results"), runs),
                        efficiency_section({(r := json.loads(Path(f).read_text(encoding="utf-8")))["dataset"]: r
                                            for f in i.paths("efficiency")})])
    build_report(inputs, job.output.path("report"))
