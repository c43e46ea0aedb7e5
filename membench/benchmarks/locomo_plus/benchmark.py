"""LoCoMo-Plus (xjtuleeyf/Locomo-Plus): LoCoMo's evidence recall over the turns of the cue dialogue stitched into a
LoCoMo conversation, the trigger asked as the question; resampled by LoCoMo conversation.

Why the conversation is the resampling unit: every item is its own haystack, but the 401 haystacks are built on 10
conversations (about 40 items each), and a cue competes with the turns of its conversation. Those turns are the same
for every item placed in that conversation and differ between conversations (369 to 689 turns, each pair of
speakers with topics of its own), so items that share a conversation share part of their difficulty and are not
independent draws. Resampling conversations, as LoCoMo's own questions are resampled, makes a figure speak for
conversations like these rather than for these 10 only; the uniform draw gives clusters of similar size (35 to 53
items on seed 0), where a cluster bootstrap behaves well. The effect is real: for bm25 on seed 0 the 95% interval of
evidence_recall@50 is 0.049-0.140 by conversation against 0.069-0.112 by question. With only 10 clusters the
interval is itself rough; `report.cluster_bootstrap: false` gives the per-question one, which holds the 10
conversations fixed (the cues were written without regard to any conversation, so that reading is also sound).
"""

from membench.benchmarks.locomo import parse as locomo
from membench.benchmarks.locomo_plus import parse as plus
from membench.benchmarks.locomo_plus import judge, scoring
from membench.benchmarks.locomo import metrics as locomo_metrics
from membench.benchmarks.record import Benchmark, Qa

BENCHMARK = Benchmark(
    kind=plus.KIND,
    parse=plus.parse,
    reads=plus.files_read,
    parse_options=("seed",),
    score=scoring.score,
    granularities=("turn",),
    headlines=tuple(locomo_metrics.metric_names()),  # evidence_recall at LoCoMo's k
    curve="evidence_recall",
    breakdown="evidence_recall@10",
    units_note=('Retrieval units: LoCoMo\'s own (`units: upstream`): each turn, the cue dialogue\'s too, indexed as '
                '`(<session date>) <speaker> said, "<text>"`, as in snap-research/locomo `task_eval/dpr_qa.py`. The '
                "cue dialogue is a session placed `time_gap` before the trigger, in a LoCoMo conversation drawn "
                "with the dataset's `seed`."),
    unit_format=locomo.retrieval_unit,
    cluster=("conversation", "conversation_id"),
    # QA: the trigger asked over the top K turns (as LoCoMo's); no reference answer, so upstream's Cognitive judge
    # (1 / 0.5 / 0 against the cue dialogue) is the verdict
    qa=Qa(granularity="turn", expand_rounds=False, judge=judge.JUDGE),
    token_budget=1024,  # as LoCoMo: a turn is ~34 cl100k tokens
)
