"""Rule rank_part: one adapter over one contiguous part of a dataset's questions -> a part of the run."""
import os

os.environ.setdefault("OMP_NUM_THREADS", str(snakemake.threads))  # an embedding miss keeps to `threads:`

from membench.runs.handoff import run_stage  # noqa: E402
from membench.stages import rank_part  # noqa: E402

run_stage(snakemake, rank_part.rule_rank_part)
