"""Rule per_question: a dataset's score files -> one wide per-question table, as Parquet and CSV."""
from membench.jobs.job import run_stage
from membench.stages import per_question

run_stage(snakemake, per_question.rule_per_question)
