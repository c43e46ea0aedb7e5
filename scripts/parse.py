"""Rule parse: native benchmark files -> results/{dataset}/*.parquet + normalization.json."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.runs.handoff import run_stage  # noqa: E402
from membench.stages import parse  # noqa: E402

run_stage(snakemake, parse.rule_parse)
