"""Rule report: summary, tests, plots, model stages, normalisations and provenance -> results/report.md."""
from membench.runs.handoff import run_stage
from membench.stages import report

run_stage(snakemake, report.rule_report)
