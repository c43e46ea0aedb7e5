"""BEAM (mohammadtavakoli78/BEAM): recall of its gold message ids and the measures of change, per ability; resampled
by chat (a chat's 20 questions share it). In QA mode its answers are also scored as its own evaluation scores them
(`membench.benchmarks.beam.judge`: rubric items judged one call each, event ordering by aligned Kendall tau)."""

from membench.benchmarks.beam import parse as beam
from membench.benchmarks.beam import judge, scoring
from membench.benchmarks.record import Benchmark, Qa

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
    # the context: the top K messages, a user message with the reply that follows it; abstention questions judged
    # as unanswerable by the generic verdict; BEAM's own rubric judge beside it
    qa=Qa(granularity="turn", expand_rounds=True, abstention=True, judge=judge.JUDGE),
    token_budget=4096,
)
