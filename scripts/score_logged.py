"""Rule score_logged: run + gold tables -> per-question metric rows and the run's upstream-format retrieval logs."""
from membench.runs.handoff import run_stage
from membench.stages import score_logged

run_stage(snakemake, score_logged.rule_score_logged)
