"""Rule rank: one adapter over one dataset (or its merged rank_part shards) -> run Parquet + TREC + metadata."""
import os

os.environ.setdefault("OMP_NUM_THREADS", str(snakemake.threads))  # an embedding miss keeps to `threads:`

from membench.runs.handoff import run_stage  # noqa: E402
from membench.stages import rank  # noqa: E402

run_stage(snakemake, rank.rule_rank)
