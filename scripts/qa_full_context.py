"""Rule qa_full_context: every QA question answered from its whole history (the upper reference)."""
from membench.plumbing.job import run_stage
from membench.stages import qa

run_stage(snakemake, qa.rule_qa_full_context)
