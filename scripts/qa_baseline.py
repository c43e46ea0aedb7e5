"""Rule qa_baseline: every QA question answered from a reference context (whole history, nothing, gold sessions)."""
from membench.runs.handoff import run_stage
from membench.stages import qa_baseline

run_stage(snakemake, qa_baseline.rule_qa_baseline)
