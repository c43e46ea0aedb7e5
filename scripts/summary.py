"""Rule summary: every dataset's summary and significance tables -> one table each."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.jobs.job import run_stage  # noqa: E402
from membench.stages import summary  # noqa: E402

run_stage(snakemake, summary.rule_summary)
