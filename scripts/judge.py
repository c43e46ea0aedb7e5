"""Rule judge: grade the unlabelled trajectories in a run's top k (Procedural)."""
from membench.jobs.job import run_stage
from membench.stages import judge

run_stage(snakemake, judge.rule_judge)
