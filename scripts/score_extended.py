"""Rule score_extended: a run scored over the official labels plus the pooled judgments."""
from membench.jobs.job import run_stage
from membench.stages import score_extended

run_stage(snakemake, score_extended.rule_score_extended)
