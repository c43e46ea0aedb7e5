"""The attribution rule (membench.memory.attribution) on hand-made cases, with the real MiniLM model."""

import math

import pytest

from membench.embedding.cache import shared_cache
from membench.memory.attribution import Attribution, attribute

TURNS = [
    ("c-1", "Caroline: I went to an LGBTQ support group yesterday and the stories people told were so moving."),
    ("c-2", "Melanie: I spent Saturday painting a sunrise over the lake with my kids."),
    ("c-3", "Caroline: I'm thinking about studying psychology so I can work as a counselor for trans youth."),
    ("c-4", "Melanie: We adopted a puppy last week, a little beagle."),
    ("c-5", "Melanie: We named him Max, after my grandfather."),
    ("c-6", "Caroline: The weather has been awful, it rained all week."),
]


@pytest.fixture(scope="module")
def cache():
    return shared_cache(None)


@pytest.mark.parametrize("memory, expected", [
    ("Caroline attended a support group for LGBTQ people and found the stories moving.", ("c-1",)),
    ("Caroline wants to become a counselor for transgender young people.", ("c-3",)),
    ("Melanie has a beagle puppy named Max.", ("c-4", "c-5")),
    ("The quarterly tax filing deadline for corporations is in April.", ()),
    ("   ", ()),
])
def test_a_rewritten_memory_maps_to_the_turns_it_came_from(cache, memory, expected):
    assert attribute(memory, TURNS, cache, Attribution()) == expected


def test_a_turn_joins_the_sources_only_if_it_adds_coverage_by_the_gain():
    scores = [0.70, 0.90, 0.80, 0.60, 0.40]
    covered = {(1,): 0.5, (0, 1): 0.6, (1, 2): 0.75, (1, 3): 0.7, (0, 1, 2): 0.8, (1, 2, 3): 0.9499}
    coverage = lambda turns: covered.get(tuple(sorted(turns)), 0.0)
    assert Attribution().choose(scores, coverage) == (1, 2)  # +.25 with turn 2; then 3 adds .1999 < .2, 0 only .05
    assert Attribution(gain=0.1999).choose(scores, coverage) == (1, 2, 3)  # the best gain each time, at most 3
    assert Attribution(gain=0.1999, max_turns=1).choose(scores, coverage) == (1,)
    assert Attribution(gain=0.1999, candidates=2).choose(scores, coverage) == (1, 2)  # 3 is not among the best 2
    assert Attribution(threshold=0.95).choose(scores, coverage) == ()  # no turn close enough: dropped
    assert Attribution(threshold=0.85).choose(scores, coverage) == (1,)  # the others are no candidates
    # equal scores once rounded to 4 places: the earlier turn first, on every CPU
    assert Attribution(gain=1).choose([0.6, 0.6000000001], coverage) == (0,)
    assert Attribution(gain=1).choose([0.6000000001, 0.6], coverage) == (0,)


def test_coverage_weighs_rare_words_and_counts_each_word_once():
    turns = [("a", "the cat sat"), ("b", "the dog sat"), ("c", "the dog ran")]
    # without the embedder, scores are coverage alone: "cat" is in one turn of three, "the" in all
    rule = Attribution(threshold=0.0, cosine_weight=0.0, gain=0.01, max_turns=3, candidates=3)
    idf = {w: math.log(1 + (3 - f + 0.5) / (f + 0.5)) for w, f in {"the": 3, "cat": 1, "ran": 1}.items()}
    assert idf["the"] < 0.2 < idf["cat"]
    assert attribute("The cat ran", turns, None, rule) == ("a", "c")  # b adds nothing a and c lack
    assert attribute("the the", turns, None, Attribution(threshold=0.99, cosine_weight=0.0)) == ("a",)  # all cover it
    assert attribute("zebra", turns, None, Attribution(cosine_weight=0.0)) == ()


def test_the_attribute_parameter_is_checked():
    assert Attribution.from_params(False) is None and Attribution.from_params(None) is None
    assert Attribution.from_params(True) == Attribution()
    assert Attribution.from_params({"max_turns": 1}) == Attribution(0.5, 0.5, 0.2, 1, 6)
    with pytest.raises(ValueError, match=r"unknown keys \['top'\]"):
        Attribution.from_params({"top": 2})
    with pytest.raises(ValueError, match="0 < max_turns <= candidates"):
        Attribution.from_params({"max_turns": 0})
    with pytest.raises(ValueError, match="0 < max_turns <= candidates"):
        Attribution.from_params({"max_turns": 4, "candidates": 3})


def test_a_run_without_its_attributed_hits_is_ranked_again_in_order():
    import pandas as pd

    from membench.scoring.attributed import without_attributed

    run = pd.DataFrame({"question_id": ["q1"] * 4 + ["q2"] * 2, "rank": [1, 2, 3, 4, 1, 2],
                        "item_id": ["a", "b", "c", "d", "a", "b"], "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0],
                        "granularity": ["turn"] * 6,
                        "attributed": pd.array([True, False, True, False, True, True], dtype="boolean")})
    kept = without_attributed(run)
    assert list(kept.columns) == ["question_id", "rank", "item_id", "score", "granularity"]
    assert kept[["question_id", "rank", "item_id"]].values.tolist() == [["q1", 1, "b"], ["q1", 2, "d"]]
