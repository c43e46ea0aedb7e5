"""Built-in adapters, the registry and the RetrievalSystem wrapper, on small haystacks reasoned out by hand."""

from __future__ import annotations

import math
import os
from datetime import date

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest

from membench.adapters.action_only import ActionOnlyAdapter
from membench.adapters.base import Adapter
from membench.adapters.bm25 import BM25Adapter
from membench.adapters.bm25_time import BM25TimeAdapter
from membench.adapters.bm25_upstream import BM25UpstreamAdapter
from membench.adapters.bm25_v2 import BM25V2Adapter, analyze
from membench.runs.registry import (AdapterLoadError, builtin_adapters, adapter_source_files, adapter_version,
                                        load_adapter)
from membench.adapters.retrieval_system import RetrievalSystemAdapter, Trajectory, trajectory_from_session
from membench.adapters.state_aware import StateAwareAdapter
from membench.adapters.substring import SubstringAdapter
from membench.adapters.date_cues import date_windows, is_knowledge_update, parse_date
from membench.embedding.cache import EmbeddingCache
from membench.sessions.build import trajectory_session
from membench.sessions.view import Event, Haystack, Query, Session
from membench.adapters.text import stem


# -- builders -------------------------------------------------------------------------------------------

def turns_haystack(texts, stamps=None, prefix=""):
    """One session per text, each holding one user turn; ids d0, d1, ...; sessions s0, s1, ..."""
    stamps = stamps or [None] * len(texts)
    return Haystack(tuple(
        Session(f"{prefix}s{i}", stamp, (Event(f"{prefix}d{i}", "turn", "user", text, stamp),))
        for i, (text, stamp) in enumerate(zip(texts, stamps))))


PROCEDURAL = Haystack((
    trajectory_session("t0", "put a clean mug in coffeemachine.", [
        ("You are in the kitchen.", "go to countertop 1"),
        ("On the countertop 1, you see a mug 1.", "take mug 1 from countertop 1")]),
    trajectory_session("t1", "heat some egg and put it in garbagecan.", [("You see a fridge 1.", "open fridge 1")]),
    trajectory_session("t2", "put a mug in shelf.", [("You see a shelf 1.", "go to shelf 1")]),
))


def fake_cache(vectors):
    """An in-memory EmbeddingCache whose 'model' looks texts up in `vectors` (unknown text -> zero vector)."""
    calls = []

    def encoder(batch):
        calls.append(list(batch))
        return np.array([vectors.get(t, [0.0, 0.0]) for t in batch], dtype=np.float32)

    cache = EmbeddingCache(None, encoder=encoder, model_id="fake")
    return cache, calls


# BM25Okapi by hand (k1 = 1.5, b = 0.75), for the five documents below
BM25_DOCS = ["Apple pie recipe", "banana bread", "apple apple tart", "cherry pie", "grape juice fresh"]


def bm25_by_hand():
    avgdl = 13 / 5
    idf = math.log((5 - 2 + 0.5) / (2 + 0.5))  # "apple" and "pie" are each in 2 of 5 documents

    def term(tf, dl):
        return idf * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * dl / avgdl))

    return [term(1, 3) + term(1, 3), 0.0, term(2, 3), term(1, 2), 0.0]


# -- bm25 -----------------------------------------------------------------------------------------------

def test_bm25_exact_ranking_and_scores():
    expected = bm25_by_hand()
    assert expected[0] == pytest.approx(0.629372, abs=1e-6)
    assert expected[2] == pytest.approx(0.458025, abs=1e-6)
    assert expected[3] == pytest.approx(0.375462, abs=1e-6)
    ranked = BM25Adapter().rank(Query("q", "apple PIE?"), turns_haystack(BM25_DOCS), "turn", 10)
    assert [i for i, _ in ranked] == ["d0", "d2", "d3", "d1", "d4"]  # the two zeros in haystack order
    for item_id, score in ranked:
        assert score == pytest.approx(expected[int(item_id[1:])], abs=1e-12)
        assert type(score) is float
    assert BM25Adapter().rank(Query("q", "apple PIE?"), turns_haystack(BM25_DOCS), "turn", 2) == ranked[:2]


def test_bm25_tie_rule_is_haystack_position():
    hay = turns_haystack(["red car", "blue bike", "red car", "green tree", "yellow sun"])
    ranked = BM25Adapter().rank(Query("q", "Red car"), hay, "turn", 5)
    assert [i for i, _ in ranked] == ["d0", "d2", "d1", "d3", "d4"]
    assert ranked[0][1] == ranked[1][1] > 0


def test_bm25_upstream_reproduces_reversed_argsort():
    hay = turns_haystack(["red car", "blue bike", "red car", "green tree", "yellow sun"])
    ranked = BM25UpstreamAdapter().rank(Query("q", "red car"), hay, "turn", 5)
    # numpy.argsort(scores)[::-1]: tied documents come out latest first, zeros included
    assert [i for i, _ in ranked] == ["d2", "d0", "d4", "d3", "d1"]
    assert ranked[0][1] == pytest.approx(0.67294447, abs=1e-8)
    # case is kept: "Red" matches no document's "red", so every score is 0 and the order is reversed
    cased = BM25UpstreamAdapter().rank(Query("q", "Red"), hay, "turn", 5)
    assert [i for i, _ in cased] == ["d4", "d3", "d2", "d1", "d0"] and {s for _, s in cased} == {0.0}
    assert BM25UpstreamAdapter().rank(Query("q", "red car"), hay, "turn", 0) == []


def test_bm25_upstream_splits_on_single_spaces_only():
    hay = turns_haystack(["paris, france", "paris trip", "rome", "oslo", "lima"])
    ranked = dict(BM25UpstreamAdapter().rank(Query("q", "paris"), hay, "turn", 5))
    assert ranked["d0"] == 0.0 and ranked["d1"] > 0  # "paris," is another token upstream
    lowered = dict(BM25Adapter().rank(Query("q", "paris"), hay, "turn", 5))
    assert lowered["d0"] > 0 and lowered["d1"] > 0


def test_bm25_index_built_once_per_haystack_and_lru_bounded():
    adapter = BM25Adapter()
    hay = turns_haystack(BM25_DOCS)
    for text in ("apple", "pie", "bread"):
        adapter.rank(Query("q", text), hay, "turn", 3)
    assert adapter._indexes.builds == 1
    for n in range(6):
        adapter.rank(Query("q", "apple"), turns_haystack([f"doc {n} apple", "other"], prefix=f"h{n}"), "turn", 3)
    assert adapter._indexes.builds == 7 and len(adapter._indexes._entries) == 4
    # same ids, different texts: rebuilt, not reused
    changed = turns_haystack(["banana"] + BM25_DOCS[1:])
    assert dict(adapter.rank(Query("q", "apple"), changed, "turn", 5))["d0"] == 0.0


def test_bm25_empty_haystack_and_empty_documents():
    assert BM25Adapter().rank(Query("q", "x"), Haystack(()), "turn", 5) == []
    ranked = BM25Adapter().rank(Query("q", "x"), turns_haystack(["", ""]), "turn", 5)
    assert ranked == [("d0", 0.0), ("d1", 0.0)]


def test_bm25_params_are_declared_and_checked():
    assert BM25Adapter().config() == {"k1": 1.5, "b": 0.75, "epsilon": 0.25}
    assert BM25Adapter(k1=1.2).config()["k1"] == 1.2
    with pytest.raises(ValueError, match=r"no parameter 'k2'.*b, epsilon, k1"):
        BM25Adapter(k2=1)


# -- bm25-time ------------------------------------------------------------------------------------------

REF = date(2023, 5, 20)  # a Saturday


@pytest.mark.parametrize("question, window", [
    ("What did I buy last week?", (date(2023, 5, 10), date(2023, 5, 16))),
    ("What did I do on May 8?", (date(2023, 5, 8), date(2023, 5, 8))),
    ("What happened on 2023/05/08?", (date(2023, 5, 8), date(2023, 5, 8))),
    ("What did I cook 3 days ago?", (date(2023, 5, 17), date(2023, 5, 17))),
    ("What did I eat yesterday?", (date(2023, 5, 19), date(2023, 5, 19))),
    ("Where did I go two weeks ago?", (date(2023, 5, 3), date(2023, 5, 9))),
    ("What did I read last month?", (date(2023, 4, 1), date(2023, 4, 30))),
    ("What did I do last Saturday?", (date(2023, 5, 13), date(2023, 5, 13))),
    ("What did I plant in March?", (date(2023, 3, 1), date(2023, 3, 31))),
    ("Which trips did I take in the past 2 months?", (date(2023, 3, 20), date(2023, 5, 20))),
    ("What did I buy on 8th of May 2022?", (date(2022, 5, 8), date(2022, 5, 8))),
])
def test_date_windows(question, window):
    assert date_windows(question, REF, slack_days=0) == [window]


def test_date_windows_ignore_non_dates_and_widen_by_slack():
    assert date_windows("This may be silly: what is my dog's name?", REF) == []
    assert date_windows("Did I march in the parade?", REF) == []
    assert date_windows("What did I eat yesterday?", REF, slack_days=2) == [(date(2023, 5, 17), date(2023, 5, 21))]
    assert date_windows("What did I eat yesterday?", None) == []  # relative cue, no reference date
    assert parse_date("2023/12/18 (Mon) 04:17").isoformat() == "2023-12-18T04:17:00"
    assert parse_date("2023-05-08T13:56:00+02:00").isoformat() == "2023-05-08T13:56:00"
    assert is_knowledge_update("Where do I live now?") and not is_knowledge_update("Where did I live?")


def test_bm25_time_boosts_in_window_and_dampens_others():
    texts = ["I went to the concert with Sam", "I went to the concert with Sam", "I baked bread",
             "The weather was nice", "We planted tomatoes", "My cat sleeps a lot"]
    stamps = ["2023-05-01T10:00:00", "2023-05-12T10:00:00", "2023-05-13T10:00:00", None, None, None]
    hay = turns_haystack(texts, stamps)
    query = Query("q", "Who did I go to the concert with last week?", "2023/05/20 (Sat) 10:00")
    plain = dict(BM25Adapter().rank(query, hay, "turn", 3))
    assert plain["d0"] == plain["d1"] > 0  # equal text: bm25 alone ranks d0 first by position
    ranked = BM25TimeAdapter().rank(query, hay, "turn", 6)
    assert [i for i, _ in ranked][:2] == ["d1", "d0"]
    scores = dict(ranked)
    assert scores["d1"] == pytest.approx(1.5 * plain["d1"])  # in [May 9, May 17]: boost
    assert scores["d0"] == pytest.approx(0.75 * plain["d0"])  # dated outside: dampen
    no_cue = Query("q", "Who did I go to the concert with?", "2023/05/20 (Sat) 10:00")
    assert BM25TimeAdapter().rank(no_cue, hay, "turn", 6) == BM25Adapter().rank(no_cue, hay, "turn", 6)


def test_bm25_time_recency_tiebreak_for_knowledge_updates():
    hay = turns_haystack(["I live in Paris", "I live in Rome", "my cat sleeps", "we planted tomatoes",
                          "the weather was nice"],
                         ["2023-01-05T09:00:00", "2023-03-05T09:00:00", "2023-04-01T09:00:00",
                          "2023-02-01T09:00:00", None])
    question = Query("q", "Where do I live now?", "2023/05/20 (Sat) 10:00")
    assert [i for i, _ in BM25Adapter().rank(question, hay, "turn", 2)] == ["d0", "d1"]
    ranked = BM25TimeAdapter().rank(question, hay, "turn", 5)
    # newer statement first; the zero scores too go newest first, the undated one last
    assert [i for i, _ in ranked] == ["d1", "d0", "d2", "d3", "d4"]
    assert ranked[0][1] == ranked[1][1] == round(dict(BM25Adapter().rank(question, hay, "turn", 5))["d0"], 3) > 0
    off = BM25TimeAdapter(recency_tiebreak=False).rank(question, hay, "turn", 5)
    assert [i for i, _ in off][:2] == ["d0", "d1"]


# -- bm25-v2 --------------------------------------------------------------------------------------------

def test_light_stemmer():
    assert {stem(w) for w in ("cook", "cooks", "cooked", "cooking")} == {"cook"}
    assert {stem(w) for w in ("study", "studies", "studied", "studying")} == {"study"}
    assert {stem(w) for w in ("make", "making")} == {"mak"}
    assert stem("running") == "run" and stem("boxes") == "box" and stem("classes") == "class"
    assert stem("bed") == "bed" and stem("2023") == "2023"


def test_bm25_v2_stems_bigrams_and_expansion():
    assert analyze("Cooking in New York") == ["cook", "new", "york", "cook new", "new york"]
    hay = turns_haystack(["I cooked pasta", "we talked about the weather", "nothing else here", "a quiet day"])
    ranked = BM25V2Adapter().rank(Query("q", "What was I cooking?"), hay, "turn", 4)
    assert ranked[0][0] == "d0" and ranked[0][1] > 0 and ranked[1][1] == 0.0
    bigram = turns_haystack(["new york trip", "york is new to me", "paris", "berlin", "rome"])
    ranked = BM25V2Adapter().rank(Query("q", "my New York trip"), bigram, "turn", 2)
    assert ranked[0][0] == "d0"
    # synonym expansion: "film" finds "movie", weighted 0.5 of the same term's own score
    syn = turns_haystack(["we watched a movie", "we went hiking", "the weather was fine", "a quiet day"])
    v2 = BM25V2Adapter()
    expanded = dict(v2.rank(Query("q", "film"), syn, "turn", 4))
    direct = dict(v2.rank(Query("q", "movie"), syn, "turn", 4))
    assert expanded["d0"] == pytest.approx(0.5 * direct["d0"]) and expanded["d0"] > 0
    assert dict(BM25V2Adapter(synonyms=False).rank(Query("q", "film"), syn, "turn", 4))["d0"] == 0.0


# -- substring ------------------------------------------------------------------------------------------

def test_substring_counts_query_keywords():
    hay = turns_haystack(["I bought red shoes", "Buying shoes, redundant", "nothing here", ""])
    ranked = SubstringAdapter().rank(Query("q", "Where did I buy the red shoes?"), hay, "turn", 4)
    # keywords: buy, red, shoes ("where", "did", "i", "the" are stopwords)
    assert ranked == [("d1", 3.0), ("d0", 2.0), ("d2", 0.0), ("d3", 0.0)]


# -- dense and hybrid (fake embeddings: exact values) -------------------------------------------------------

def test_hybrid_formula_by_hand():
    vectors = {"apple pie": [1, 0], BM25_DOCS[0]: [1, 0], BM25_DOCS[1]: [0, 1], BM25_DOCS[2]: [0.6, 0.8],
               BM25_DOCS[3]: [-1, 0], BM25_DOCS[4]: [0.8, 0.6]}
    cache, _ = fake_cache(vectors)
    adapter = load_adapter("hybrid", {"weight": 0.5}, {"embedding_cache": cache})
    lexical = bm25_by_hand()
    cosine = [1.0, 0.0, 0.6, -1.0, 0.8]
    expected = [lexical[i] / lexical[0] + 0.5 * cosine[i] for i in range(5)]  # max(bm25) is document 0
    ranked = adapter.rank(Query("q", "apple pie"), turns_haystack(BM25_DOCS), "turn", 5)
    assert [i for i, _ in ranked] == ["d0", "d2", "d4", "d3", "d1"]
    for item_id, score in ranked:
        assert score == pytest.approx(expected[int(item_id[1:])], abs=1e-6)
    # no query word in the haystack: max(bm25) = 0, the lexical part is 0
    vectors["zebra"] = [0, 1]
    ranked = dict(adapter.rank(Query("q", "zebra"), turns_haystack(BM25_DOCS), "turn", 5))
    assert ranked["d1"] == pytest.approx(0.5) and ranked["d2"] == pytest.approx(0.4)


def test_dense_shares_embeddings_across_haystacks():
    cache, calls = fake_cache({"x": [1, 0], "y": [0, 1], "z": [0.6, 0.8], "q": [0, 1]})
    adapter = load_adapter("dense", {}, {"embedding_cache": cache})
    assert adapter.rank(Query("q1", "q"), turns_haystack(["x", "y"]), "turn", 2) == [("d1", 1.0), ("d0", 0.0)]
    ranked = adapter.rank(Query("q2", "q"), turns_haystack(["y", "z"]), "turn", 2)
    assert [i for i, _ in ranked] == ["d0", "d1"] and ranked[1][1] == pytest.approx(0.8)
    assert (cache.misses, cache.hits, cache.model_calls) == (4, 2, 3)  # y and q are embedded once
    assert calls == [["x", "y"], ["q"], ["z"]]


@pytest.mark.slow
def test_dense_ranks_a_paraphrase_above_an_unrelated_document():
    hay = turns_haystack(["The quarterly tax report is due on Friday.", "My dog loves chasing balls in the park.",
                          "I replaced the kitchen faucet."])
    adapter = load_adapter("dense", {}, {"embedding_cache": EmbeddingCache(None)})
    ranked = adapter.rank(Query("q", "What game does my puppy enjoy?"), hay, "turn", 3)
    assert ranked[0][0] == "d1" and ranked[0][1] > ranked[1][1]
    assert all(type(s) is float for _, s in ranked)


# -- procedural baselines ---------------------------------------------------------------------------------

def test_state_aware_and_action_only_texts_match_upstream():
    docs = StateAwareAdapter().documents(PROCEDURAL, "trajectory")
    assert docs[0].item_id == "t0" and docs[0].position == 0
    assert docs[0].text == ("Task: put a clean mug in coffeemachine.\nSteps:\n"
                            "1. State: You are in the kitchen. -> Action: go to countertop 1\n"
                            "2. State: On the countertop 1, you see a mug 1. -> Action: take mug 1 from countertop 1")
    actions = ActionOnlyAdapter().documents(PROCEDURAL, "trajectory")
    assert [d.text for d in actions] == ["go to countertop 1 | take mug 1 from countertop 1", "open fridge 1",
                                         "go to shelf 1"]
    with pytest.raises(ValueError, match="trajectory"):
        StateAwareAdapter().rank(Query("q", "mug"), PROCEDURAL, "turn", 3)


def test_state_aware_ranks_by_cosine_over_its_texts():
    texts = [d.text for d in StateAwareAdapter().documents(PROCEDURAL, "trajectory")]
    cache, _ = fake_cache({texts[0]: [1, 0], texts[1]: [0, 1], texts[2]: [0.8, 0.6], "clean a mug": [1, 0]})
    adapter = load_adapter("state-aware", {}, {"embedding_cache": cache})
    ranked = adapter.rank(Query("q", "clean a mug"), PROCEDURAL, "trajectory", 2)
    assert [i for i, _ in ranked] == ["t0", "t2"] and ranked[1][1] == pytest.approx(0.8)


# -- RetrievalSystem wrapper ------------------------------------------------------------------------------

def test_trajectory_reconstruction():
    traj = trajectory_from_session(PROCEDURAL.sessions[0])
    assert traj.task_instance_id == "t0" and traj["task_description"] == "put a clean mug in coffeemachine."
    assert traj.state_action_pairs[1] == {"step_id": 2, "state": "On the countertop 1, you see a mug 1.",
                                          "action": "take mug 1 from countertop 1"}
    assert traj.total_steps == 2 and traj.get_action_sequence() == ["go to countertop 1", "take mug 1 from countertop 1"]


def test_wrapper_runs_the_example_plugin():
    adapter = load_adapter("tests.example_plugin:WordOverlap", {})
    assert isinstance(adapter, RetrievalSystemAdapter)
    ranked = adapter.rank(Query("q", "put a mug in shelf."), PROCEDURAL, "trajectory", 3)
    # query words {put, a, mug, in, shelf.}: t2 has all 5, t0 has put/a/mug/in (4), t1 has put/in (2)
    assert ranked == [("t2", 1.0), ("t0", 0.8), ("t1", 0.4)]
    adapter.rank(Query("q2", "heat some egg"), PROCEDURAL, "trajectory", 1)
    assert adapter._systems.builds == 1  # the haystack is indexed once for every query
    config = adapter.config()
    assert config["system"] == "tests.example_plugin:WordOverlap"
    assert config["system_name"] == "word_overlap" and config["system_info"]["corpus_size"] == 3
    assert adapter.rank(Query("q", "mug"), PROCEDURAL, "trajectory", 0) == []
    assert len(adapter.rank(Query("q", "mug"), PROCEDURAL, "trajectory", 50)) == 3


class ReversedTies:
    """Upstream-style system built through index(); returns equal scores in reverse corpus order."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def index(self, trajectories):
        self.ids = [t["task_instance_id"] for t in trajectories]

    def retrieve(self, query, k=5):
        return [(i, self.scale) for i in reversed(self.ids)][:k]

    def get_system_name(self):
        return "reversed"

    def get_system_info(self):
        return {"scale": self.scale}


def test_wrapper_index_method_params_and_tie_rule():
    adapter = RetrievalSystemAdapter(ReversedTies, scale=2.0)
    assert adapter.rank(Query("q", "x"), PROCEDURAL, "trajectory", 3) == [("t0", 2.0), ("t1", 2.0), ("t2", 2.0)]
    assert adapter.config()["system_info"] == {"scale": 2.0}


def test_wrapper_rejects_foreign_ids_and_unindexable_systems():
    class Liar(ReversedTies):
        def retrieve(self, query, k=5):
            return [{"task_instance_id": "alfworld_0", "similarity": 1.0}]

    with pytest.raises(ValueError, match="not a trajectory of the haystack"):
        RetrievalSystemAdapter(Liar).rank(Query("q", "x"), PROCEDURAL, "trajectory", 2)

    class LoadsItsOwnCorpus:
        def retrieve(self, query, k=5):
            return []

        def get_system_name(self):
            return "own"

        def get_system_info(self):
            return {}

    with pytest.raises(TypeError, match="trajectories"):
        RetrievalSystemAdapter(LoadsItsOwnCorpus).rank(Query("q", "x"), PROCEDURAL, "trajectory", 2)


def test_trajectory_objects_read_like_upstream_dicts():
    traj = Trajectory("a", "do it", [{"step_id": 1, "state": "s", "action": "a1"}], 1)
    assert traj.get("missing", 7) == 7 and set(traj.keys()) >= {"task_instance_id", "state_action_pairs"}
    assert traj.get_embedding_text() == "Task: do it\nSteps:\n1. State: s -> Action: a1"
    with pytest.raises(KeyError):
        traj["nope"]


# -- registry ---------------------------------------------------------------------------------------------

def test_builtins_are_all_registered():
    assert set(builtin_adapters()) == {"bm25", "bm25-upstream", "bm25-time", "bm25-v2", "dense", "hybrid", "substring",
                             "state-aware", "action-only"}
    for name, cls in builtin_adapters().items():
        assert issubclass(cls, Adapter) and cls.name == name and cls.__doc__


def test_load_adapter_plugin_adapter_subclass():
    adapter = load_adapter("tests.example_plugin:TaskWords", {})
    assert adapter.name == "task-words"
    ranked = adapter.rank(Query("q", "pie recipe"), turns_haystack(BM25_DOCS), "turn", 2)
    assert ranked == [("d0", 2.0), ("d3", 1.0)]


@pytest.mark.parametrize("spec, message", [
    ("bm26", r"unknown adapter 'bm26'.*bm25, bm25-upstream, bm25-time"),
    ("no_such_module_xyz:Thing", r"cannot import module 'no_such_module_xyz'.*built-in adapters: bm25"),
    ("tests.example_plugin:Nope", r"has no class 'Nope'"),
    ("membench.sessions.view:Event", r"neither an Adapter subclass .* nor a RetrievalSystem"),
])
def test_load_adapter_errors_are_clear(spec, message):
    with pytest.raises(AdapterLoadError, match=message):
        load_adapter(spec, {})


def test_source_files_and_versions():
    def names(spec):
        return {p.relative_to(p.parents[1]).as_posix() for p in adapter_source_files(spec)}

    # with the package __init__ files an import runs first
    assert names("bm25") == {"adapters/bm25.py", "adapters/base.py", "sessions/view.py", "sessions/checks.py",
                             "adapters/text.py", "adapters/term_counts.py", "membench/__init__.py",
                             "adapters/__init__.py", "sessions/__init__.py"}
    assert "adapters/date_cues.py" in names("bm25-v2") and "embedding/cache.py" not in names("bm25-v2")
    assert "adapters/bm25_time.py" not in names("bm25-v2")  # the date cues are shared through membench.adapters.date_cues
    assert {"adapters/dense.py", "adapters/bm25.py", "embedding/cache.py"} <= names("hybrid")
    assert {"tests/example_plugin.py", "adapters/retrieval_system.py"} <= names("tests.example_plugin:WordOverlap")
    assert "adapters/retrieval_system.py" not in names("tests.example_plugin:TaskWords")
    assert adapter_version("bm25", {}) == adapter_version("bm25", {})
    assert adapter_version("bm25", {}) != adapter_version("bm25", {"k1": 1.2})
    assert adapter_version("bm25", {}) != adapter_version("bm25-time", {})
    assert len(adapter_version("dense", {})) == 16
