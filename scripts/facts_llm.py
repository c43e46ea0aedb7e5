"""Rule facts_llm: atomic facts per distinct session, extracted by the model (cached, budgeted)."""
from membench.plumbing.job import run_stage
from membench.stages import facts

run_stage(snakemake, facts.rule_facts_llm)
