"""Rule facts_observation: LoCoMo's own observation facts as fact logs (zero model calls)."""
from membench.jobs.job import run_stage
from membench.stages import facts_observation

run_stage(snakemake, facts_observation.rule_facts_observation)
