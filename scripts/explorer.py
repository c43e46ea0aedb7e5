"""Rule explorer: the run's outputs -> results/explorer/, an offline results explorer (index.html + data scripts)."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.jobs.job import run_stage  # noqa: E402
from membench.stages import explorer  # noqa: E402

run_stage(snakemake, explorer.rule_explorer)
