"""Rule item_tokens: what each turn of a dataset costs an agent to read (cl100k_base tokens)."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.jobs.job import run_stage  # noqa: E402
from membench.stages import item_tokens  # noqa: E402

run_stage(snakemake, item_tokens.rule_item_tokens)
