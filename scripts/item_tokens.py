"""Rule item_tokens: what each turn of a dataset costs an agent to read (cl100k_base tokens)."""
from membench.jobs.job import run_stage
from membench.stages import item_tokens

run_stage(snakemake, item_tokens.rule_item_tokens)
