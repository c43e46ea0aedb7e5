"""Rule rank_memory: one memory system over one dataset -> run Parquet, TREC run, metadata, cost record."""
import os

os.environ.setdefault("OMP_NUM_THREADS", str(snakemake.threads))  # the embedding model keeps to `threads:`

from membench.runs.handoff import run_stage  # noqa: E402
from membench.stages import rank_memory  # noqa: E402

run_stage(snakemake, rank_memory.rule_rank_memory, file_only=("mem0",))  # mem0 logs each insert at INFO
