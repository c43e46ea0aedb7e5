"""Rule embedded: the embed shards that embedded a dataset's texts -> the marker its embedding runs' ranks wait for."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.jobs.job import run_stage  # noqa: E402
from membench.stages import embedded  # noqa: E402

run_stage(snakemake, embedded.rule_embedded)
