"""BEAM (mohammadtavakoli78/BEAM): recall of its gold message ids and the measures of change, per ability; resampled
by chat (a chat's 20 questions share it)."""

from membench.benchmarks.beam import parse as beam
from membench.benchmarks.beam import scoring
from membench.benchmarks.record import Benchmark

BENCHMARK = Benchmark(
    kind=beam.KIND,
    parse=beam.parse,
    reads=beam.files_read,
    score=scoring.score,
    granularities=("turn", "session"),
    headlines=("turn/recall@10", "turn/recall_all@10", "turn/ndcg@10", "session/recall@5", "change/fresh@10",
               "change/both_sides@10", "change/all_events@10"),
    curve="turn/recall",
    breakdown="turn/recall@10",
    units_note=("Retrieval units: BEAM's messages (user and assistant alike; its gold names both), and its batches as "
                "sessions. The chat file is `chat_trunecated.json` where it exists, as upstream's answering code reads."),
    cluster=("chat", "haystack_id"),
    token_budget=4096,
)
