"""Rule item_tokens: what each turn of a dataset costs an agent to read (cl100k_base tokens)."""
from membench.plumbing.job import run_stage
from membench.stages import score

run_stage(snakemake, score.rule_item_tokens)
