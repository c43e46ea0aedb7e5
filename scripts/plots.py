"""Rule plots: a dataset's metric@k curves, per-group bars, miss analysis (table and plot) and efficiency (CIs,
efficiency.json, the chart)."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.runs.handoff import run_stage  # noqa: E402
from membench.stages import plots  # noqa: E402

run_stage(snakemake, plots.rule_plots)
