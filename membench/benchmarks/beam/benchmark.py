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
    # recall, then the measures of change where more is better (stale@k and one_side@k, where less is, are in
    # the report's measures-of-change table and summary.json's `change`); a 100K chat has ~4 batches, so session
    # recall is read at 1
    headlines=("turn/recall@10", "turn/recall_all@10", "turn/ndcg@10", "session/recall@1", "change/fresh@10",
               "change/both_sides@10", "change/event_recall@10"),
    curve="turn/recall",
    breakdown="turn/recall@10",
    units_note=("Retrieval units: BEAM's messages (user and assistant alike; its gold names both), and its batches as "
                "sessions. The chat file is `chat_trunecated.json` where it exists, as upstream's answering code reads."),
    cluster=("chat", "haystack_id"),
    token_budget=4096,
)
