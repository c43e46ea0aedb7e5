"""Rule per_question: a dataset's score files -> one wide per-question table, as Parquet and CSV."""
from membench.plumbing.job import run_stage
from membench.report import artifacts

run_stage(snakemake, artifacts.rule_per_question)
