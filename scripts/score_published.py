"""Rule score_published: a run scored on the evidence as published, for the questions an evidence erratum changed."""
from membench.runs.handoff import run_stage
from membench.stages import score_published

run_stage(snakemake, score_published.rule_score_published)
