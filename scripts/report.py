"""Rule report: summary, tests, plots, model stages, normalisations and provenance -> results/report.md."""
from membench.plumbing.job import run_stage
from membench.report import build

run_stage(snakemake, build.rule_report)
