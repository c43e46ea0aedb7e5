"""Rule qa: answer from a run's top k and judge each answer (LongMemEval, LoCoMo)."""
from membench.runs.handoff import run_stage
from membench.stages import qa

run_stage(snakemake, qa.rule_qa)
