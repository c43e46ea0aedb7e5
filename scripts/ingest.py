"""Rule ingest: parsed tables -> gold-free session logs, view tables and scorer-side id maps."""
from membench.runs.handoff import run_stage
from membench.stages import ingest

run_stage(snakemake, ingest.rule_ingest)
