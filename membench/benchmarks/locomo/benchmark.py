"""LoCoMo (snap-research/locomo): evidence recall over turns in its own unit format, resampled by conversation."""

from pathlib import Path

from membench.benchmarks.locomo import metrics
from membench.benchmarks.record import Benchmark, Qa
from membench.benchmarks.locomo import parse as locomo
from membench.benchmarks.locomo import answer_f1, scoring, verdict

HERE = Path(__file__).parent
DATA_FILES = ('errata.json', 'evidence-errata.json')  # its shipped errata: part of the code version of every rule that imports it

BENCHMARK = Benchmark(
    kind=locomo.KIND,
    parse=locomo.parse,
    reads=lambda source: (locomo.find_file(source),),
    score=scoring.score,
    granularities=("turn",),
    headlines=tuple(metrics.metric_names()),  # evidence_recall at LoCoMo's k
    curve="evidence_recall",
    breakdown="evidence_recall@10",
    units_note=('Retrieval units: LoCoMo\'s own (`units: upstream`): each turn indexed as `(<session date>) '
                '<speaker> said, "<text>"`, plus `[shares <image caption>]` when it shares an image, as in '
                "snap-research/locomo `task_eval/dpr_qa.py`."),
    unit_format=locomo.retrieval_unit,
    cluster=("conversation", "haystack_id"),
    qa=Qa(granularity="turn", expand_rounds=False, categories=True, verdict_by_rule=verdict.verdict_by_rule,
           answer_f1=answer_f1.locomo_score),
    facts=True,
    observations=True,
    errata=HERE / "errata.json",
    name_categories=locomo.name_categories,
    evidence_errata=HERE / "evidence-errata.json",
    token_budget=1024,  # a LoCoMo session is ~740 cl100k tokens (median), a turn ~34
)
