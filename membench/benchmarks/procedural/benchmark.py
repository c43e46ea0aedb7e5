"""Procedural Memory Benchmark: whole trajectories ranked in full (AP over every label), top k judged by a model."""

from membench.benchmarks.record import Benchmark
from membench.benchmarks.procedural import parse as procedural
from membench.benchmarks.procedural import scoring
BENCHMARK = Benchmark(
    kind=procedural.KIND,
    parse=procedural.parse,
    reads=procedural.find_files,
    score=scoring.score,
    granularities=("trajectory",),
    headlines=("P@5", "R@10", "nDCG@5", "nDCG@10", "AP", "judged@5", "upstream/AP"),
    curve="R",
    breakdown="nDCG@5",
    units_note="Retrieval units: whole trajectories (task + state/action steps), ranked in full (AP is the "
               "full-label MAP).",
    full_depth=True,  # 336 trajectories, so AP is the full-label MAP
    judged=True,
    token_budget=2048,  # a trajectory is ~550 cl100k tokens (median): about four of them
)
