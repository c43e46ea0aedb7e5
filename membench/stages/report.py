"""Rule report: summary, tests, plots, model stages, normalisations and provenance -> results/report.md."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from membench.jobs.job import Job
from membench.report.answers import answers_section
from membench.report.build import ReportInputs, build_report
from membench.report.efficiency import efficiency_section
from membench.report.evidence_errata import EvidenceErrataFiles
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
    datasets = list(job.benchmarks)
    metas = dict(zip(runs, i.paths("metas")))
    applied = dict(zip(p.errata_datasets, i.paths("evidence_errata")))
    published = dict(zip([r for r in runs if r[0] in applied], i.paths("published_scores")))
    scores = dict(zip(runs, i.paths("scores")))
    summary, significance = pd.read_parquet(i.summary), pd.read_parquet(i.significance)
    headlines = {d: record.headlines for d, record in job.benchmarks.items()}
    inputs = ReportInputs(
        datasets=dict(job.benchmarks), summary=summary,
        significance=significance, runs=runs, baseline=p.baseline,
        config=dict(p.config), bench_dir=Path("benchmarks"),
        extra_sections=["## Model-call stages\n\n" + models, answers_section(summary, significance, datasets),
                        memory_section(metas, summary, headlines),
                        efficiency_section({(r := json.loads(Path(f).read_text(encoding="utf-8")))["dataset"]: r
                                            for f in i.paths("efficiency")})],
        metas=metas, normalization=dict(zip(datasets, i.paths("normalization"))),
        difficulty=dict(zip(datasets, i.paths("difficulty"))),
        evidence_errata={d: EvidenceErrataFiles(table, {a: (scores[d, a], published[d, a]) for dd, a in runs if dd == d})
                         for d, table in applied.items()},
        summary_json=i.path("summary_json"))
    build_report(inputs, job.output.path("report"))
