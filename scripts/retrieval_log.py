"""Rule retrieval_log: a LongMemEval run in the benchmark's own retrieval-log format."""
from membench.jobs.job import run_stage
from membench.stages import retrieval_log

run_stage(snakemake, retrieval_log.rule_retrieval_log)
