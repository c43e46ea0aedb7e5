"""Rule score_logged: run + gold tables -> per-question metric rows and the run's upstream-format retrieval logs."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.runs.handoff import run_stage  # noqa: E402
from membench.stages import score_logged  # noqa: E402

run_stage(snakemake, score_logged.rule_score_logged)
