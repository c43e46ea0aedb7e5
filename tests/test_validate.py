"""`membench validate`: good plugins pass, broken ones get plain-word problems."""

from __future__ import annotations

import textwrap

import pytest

from membench.runs.validate import main, validate_adapter

BROKEN = textwrap.dedent('''
    import random
    from membench.adapters.base import Adapter, order_by_score


    class TooMany(Adapter):
        name = "too-many"

        def rank(self, query, haystack, granularity, k):
            return [(d.item_id, 1.0) for d in haystack.documents(granularity)]  # ignores k


    class Random(Adapter):
        name = "random"

        def score(self, query, documents):
            return [random.random() for _ in documents]


    class CrashOnEmptyQuery(Adapter):
        name = "crash"

        def score(self, query, documents):
            if not query.text:
                raise ValueError("empty query")
            return [float(len(d.text)) for d in documents]


    class MadeUpIds(Adapter):
        name = "made-up"

        def rank(self, query, haystack, granularity, k):
            return [("alfworld_0", 1.0)][:k]


    class IntScores(Adapter):
        name = "ints"

        def rank(self, query, haystack, granularity, k):
            return [(d.item_id, 1) for d in haystack.documents(granularity)][:k]


    class NoName(Adapter):
        def score(self, query, documents):
            return [0.0 for _ in documents]


    class Worst(Adapter):
        name = "worst"

        def rank(self, query, haystack, granularity, k):
            docs = haystack.documents(granularity)
            return order_by_score(docs, [float(i) for i in range(len(docs))], k)[::-1]  # worst first


    class HalfSystem:
        def retrieve(self, query, k=5):
            return []

        def get_system_name(self):
            return "half"


    class GreedySystem:
        def __init__(self, trajectories):
            self.ids = [t.task_instance_id for t in trajectories]

        def retrieve(self, query, k=5):
            return [{"task_instance_id": i, "similarity": 1.0} for i in self.ids]  # ignores k

        def get_system_name(self):
            return "greedy"

        def get_system_info(self):
            return {}
''')


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plugins")
    (folder / "membench_broken_plugins.py").write_text(BROKEN)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(folder))
        yield "membench_broken_plugins"


@pytest.mark.parametrize("spec", ["tests.example_plugin:WordOverlap", "tests.example_plugin:TaskWords", "bm25",
                                  "bm25-upstream", "bm25-time", "bm25-v2", "substring"])
def test_good_adapters_pass(spec):
    assert validate_adapter(spec) == []


@pytest.mark.parametrize("cls, expected", [
    ("TooMany", "rank() at granularity 'turn' with k=2 returned 8 items (at most 2 allowed)"),
    ("Random", "rank() at granularity 'turn' gave a different answer when asked the same question twice "
               "(it must be deterministic)"),
    ("CrashOnEmptyQuery", "rank() crashed at granularity 'turn' on an empty query: ValueError: empty query"),
    ("MadeUpIds", "rank() at granularity 'turn' with k=2 returned the id 'alfworld_0', which is not in the haystack"),
    ("IntScores", "rank() at granularity 'turn' with k=2 gave a score of type int (1); scores must be floats"),
    ("NoName", "it has no name of its own: set the class attribute `name` to a short string"),
    ("Worst", "rank() at granularity 'turn' with k=2 did not put the results best first (scores go up down the list)"),
    ("HalfSystem", "it looks like a RetrievalSystem but lacks get_system_info()"),
    ("GreedySystem", "retrieve() returned 4 results for k=2 (at most 2 allowed)"),
])
def test_broken_plugins_are_flagged(broken, cls, expected):
    problems = validate_adapter(f"{broken}:{cls}")
    assert expected in problems, problems


def test_wrapped_greedy_system_still_respects_k(broken):
    from membench.runs.registry import load_adapter
    from membench.runs.validate import PROCEDURAL, PROCEDURAL_QUERY

    adapter = load_adapter(f"{broken}:GreedySystem", {})
    assert len(adapter.rank(PROCEDURAL_QUERY, PROCEDURAL, "trajectory", 2)) == 2


def test_unloadable_specs():
    assert validate_adapter("no_such_module_xyz:Thing")[0].startswith(
        "it does not load: cannot import module 'no_such_module_xyz'")
    assert validate_adapter("bm25", {"k2": 3}) == [
        "it does not load with params {'k2': 3}: ValueError: adapter 'bm25' has no parameter 'k2'; "
        "its parameters are: b, epsilon, k1"]


def test_main_exit_codes_and_output(broken, capsys):
    assert main(["tests.example_plugin:WordOverlap"]) == 0
    assert "tests.example_plugin:WordOverlap: OK" in capsys.readouterr().out
    assert main([f"{broken}:CrashOnEmptyQuery"]) == 1
    out = capsys.readouterr().out
    assert "problem(s) found:" in out and "\n  - rank() crashed at granularity 'turn' on an empty query" in out
    assert main(["bm25", "-p", "k1=1.2", "--param", "b=0.5"]) == 0
