"""A third-party system's answer is checked before it is scored (membench.sessions.checks): at run time each
broken rule is an error naming the run and the question, and `membench validate` reports it on the plugin."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from conftest import locomo_slice
from membench.benchmarks.registry import benchmark
from membench.errors import SystemOutputError
from membench.memory.run import run_memory
from membench.runs.registry import load_adapter, resolve
from membench.runs.request import RunFiles, RunRequest
from membench.runs.validate import validate_adapter
from membench.stages import rank
from membench.stages.rank import rank_dataset
from test_gold_permutation import build

PLUGINS = "untrusted_plugins"


@pytest.fixture(scope="module")
def locomo(locomo_dir, tmp_path_factory):
    """LoCoMo conv-26 + conv-30, parsed and ingested."""
    tmp = tmp_path_factory.mktemp("untrusted")
    return build("locomo", locomo_slice(locomo_dir, tmp / "slice"), tmp / "locomo")


def first_question(folder) -> str:
    import pandas as pd

    return pd.read_parquet(folder / "maps" / "query_map.parquet").question_id.iloc[0]


ADAPTER_RULES = [
    ("DuplicateIds", r"returned the id '\S+' more than once"),
    ("ForeignIds", r"returned the id 's0000000000000000-1', which is not in the haystack"),
    ("InfiniteScores", r"gave the non-finite score inf for '\S+'"),
    ("TooMany", r"returned 51 items \(at most 50 allowed\)"),
    ("ShortScoreList", r"returned \d+ scores from score\(\) for \d+ documents"),
]


@pytest.mark.data
@pytest.mark.parametrize("cls, message", ADAPTER_RULES)
def test_a_bad_adapter_answer_fails_the_run_naming_run_and_question(locomo, cls, message):
    question = first_question(locomo)
    with pytest.raises(SystemOutputError, match=rf"^run 'mine', question '{question}': the system {message}"):
        rank_dataset(benchmark("locomo"), locomo, load_adapter(f"{PLUGINS}:{cls}"), 50, name="mine")


@pytest.mark.data
@pytest.mark.parametrize("cls, message", [
    ("MemoryForeignRefs", r"returned the id 'elsewhere-1' \(hit 1\), which is not in the haystack"),
    ("MemoryRefTwice", r"returned the id '\S+' more than once in hit 1"),
    ("MemoryNanScore", r"gave the non-finite score nan for hit 1"),
    ("MemoryTooMany", r"returned 51 hits \(at most 50 allowed\)"),
])
def test_a_bad_memory_answer_fails_the_run_naming_run_and_question(locomo, tmp_path, cls, message):
    question = first_question(locomo)
    with pytest.raises(SystemOutputError, match=rf"^run 'mine', question '{question}': the system {message}"):
        run_memory(benchmark("locomo"), locomo, resolve(f"{PLUGINS}:{cls}")(), 50, tmp_path, name="mine")


@pytest.mark.data
def test_fewer_than_k_is_legal_and_counted(locomo, tmp_path):
    """LoCoMo ranks turns, 50 a question; every conversation holds more than 3 turns, so each of the 304 rankings of
    3 is short, and bm25's 50 never are."""
    short = Counter()
    run = rank_dataset(benchmark("locomo"), locomo, load_adapter(f"{PLUGINS}:FewerThanK"), 50, short=short)
    questions = run.question_id.nunique()
    assert questions == 304 and short == {"turn": 304}
    assert run.groupby(["question_id", "granularity"]).size().max() == 3
    request = RunRequest("fewer", f"{PLUGINS}:FewerThanK", {}, benchmark("locomo"), 50, locomo)
    rank.run(request, RunFiles(tmp_path / "r.parquet", tmp_path / "r.trec", tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text())["short_rankings"] == {"turn": 304}
    request = RunRequest("bm25", "bm25", {}, benchmark("locomo"), 50, locomo)
    rank.run(request, RunFiles(tmp_path / "b.parquet", tmp_path / "b.trec", tmp_path / "b.json"))
    assert json.loads((tmp_path / "b.json").read_text())["short_rankings"] == {"turn": 0}


@pytest.mark.parametrize("cls, message", [
    ("DuplicateIds", "rank() at granularity 'turn' with k=2 returned the id"),
    ("ForeignIds", "rank() at granularity 'turn' with k=2 returned the id 's0000000000000000-1', which is not in "
                   "the haystack"),
    ("InfiniteScores", "rank() at granularity 'turn' with k=2 gave the non-finite score inf for"),
    ("TooMany", "rank() at granularity 'turn' with k=2 returned 3 items (at most 2 allowed)"),
    ("ShortScoreList", "rank() crashed at granularity 'turn' with k=2: ScoreCountError: returned 7 scores from "
                       "score() for 8 documents"),
    ("MemoryForeignRefs", "search() with k=2 returned the id 'elsewhere-1' (hit 1), which is not in the haystack"),
    ("MemoryRefTwice", "search() with k=2 returned the id 'v-s1-1' more than once in hit 1"),
    ("MemoryNanScore", "search() with k=2 gave the non-finite score nan for hit 1"),
    ("MemoryTooMany", "search() with k=2 returned 3 hits (at most 2 allowed)"),
])
def test_validate_reports_each_rule_on_a_plugin(cls, message):
    problems = validate_adapter(f"{PLUGINS}:{cls}")
    assert any(p.startswith(message) for p in problems), problems


def test_validate_passes_good_memory_systems():
    assert validate_adapter("session-log") == []
    assert validate_adapter(f"{PLUGINS}:FewerThanK") == []
