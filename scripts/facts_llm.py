"""Rule facts_llm: atomic facts per distinct session, extracted by the model (cached, budgeted)."""
from membench.runs.handoff import run_stage
from membench.stages import facts_llm

run_stage(snakemake, facts_llm.rule_facts_llm)
