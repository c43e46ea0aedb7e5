"""Rule qa_full_context: every QA question answered from its whole history (the upper reference)."""
from membench.runs.handoff import run_stage
from membench.stages import qa_full_context

run_stage(snakemake, qa_full_context.rule_qa_full_context)
