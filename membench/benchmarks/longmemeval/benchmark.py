"""LongMemEval (xiaowu0162/LongMemEval): its retrieval protocol over user turns, ranked in full, and QA."""

from pathlib import Path

from membench.benchmarks.record import Benchmark, Qa
from membench.benchmarks.longmemeval import parse as longmemeval
from membench.benchmarks.longmemeval import scoring, verdict

HERE = Path(__file__).parent
DATA_FILES = ('evidence-errata.json',)  # its shipped errata: part of the code version of every rule that imports it

BENCHMARK = Benchmark(
    kind=longmemeval.KIND,
    parse=longmemeval.parse,
    reads=lambda source: (longmemeval.find_file(source),),
    score=scoring.score,
    granularities=("session", "turn"),
    headlines=("session/recall_any@5", "session/recall_all@5", "session/ndcg_any@10", "turn2session/recall_all@5",
               "turn2session/ndcg_any@10", "turn/recall_all@10"),
    curve="session/recall_any",
    breakdown="session/recall_all@5",
    units_note="Retrieval units: LongMemEval's own (user turns; sessions of user turns), ranked in full.",
    user_turns_only=True,
    full_depth=True,
    qa=Qa(granularity="session", expand_rounds=True, abstention=True, rubrics=verdict.RUBRICS),
    facts=True,
    evidence_errata=HERE / "evidence-errata.json",
    retrieval_log=True,
    token_budget=4096,  # a LongMemEval session is ~2,600 cl100k tokens (median), a turn ~108
)
