"""Rule score_extended: a run scored over the official labels plus the pooled judgments."""
from membench.plumbing.job import run_stage
from membench.stages import judge

run_stage(snakemake, judge.rule_score_extended)
