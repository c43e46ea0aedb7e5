"""Rule facts_observation: LoCoMo's own observation facts as fact logs (zero model calls)."""
from membench.plumbing.job import run_stage
from membench.stages import facts

run_stage(snakemake, facts.rule_facts_observation)
