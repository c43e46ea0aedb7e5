"""Rule efficiency: one dataset's efficiency rows, run metadata and costs -> CIs, efficiency.json, the chart."""
from membench.runs.handoff import run_stage
from membench.stages import efficiency

run_stage(snakemake, efficiency.rule_efficiency)
