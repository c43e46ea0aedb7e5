"""Rule score_published: a run scored on the evidence as published, for the questions an evidence erratum changed."""
from membench.plumbing.job import run_stage
from membench.stages import score

run_stage(snakemake, score.rule_score_published)
