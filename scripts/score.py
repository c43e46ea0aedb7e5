"""Rule score: run + gold tables -> per-question metric rows."""
from membench.runs.handoff import run_stage
from membench.stages import score

run_stage(snakemake, score.rule_score)
