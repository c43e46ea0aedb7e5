"""Rule report: summary, tests, plots, model stages, normalisations and provenance -> results/report.md."""
from membench.jobs.job import run_stage
from membench.stages import report

run_stage(snakemake, report.rule_report)
