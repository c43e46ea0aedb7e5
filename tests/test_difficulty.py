"""Miss analysis: gold-side question features computed by hand on a tiny haystack."""

from __future__ import annotations

import math

import pandas as pd

from membench.report.difficulty import difficulty_markdown, difficulty_table, question_features


def _gold():
    questions = pd.DataFrame({"question_id": ["q1", "q2", "q3"], "haystack_id": ["h", "h", "h"]})
    haystacks = pd.DataFrame({"haystack_id": ["h", "h"], "position": [0, 1], "session_key": ["s0", "s1"]})
    turns = pd.DataFrame({"session_key": ["s0"] * 3 + ["s1"] * 2, "turn_index": [0, 1, 2, 0, 1],
                          "item_id": ["a", "b", "c", "d", "e"]})
    qrels = pd.DataFrame({"question_id": ["q1", "q2", "q2"], "item_id": ["b", "a", "e"],
                          "granularity": ["turn"] * 3, "relevance": [1.0] * 3})
    return questions, qrels, haystacks, turns


def test_features_by_hand():
    f = question_features(*_gold()).set_index("question_id")
    # q1: evidence b = 2nd of 5 turns (position 1/4), in session 0 with 1 session after it
    assert f.loc["q1"].tolist() == [1, 1.0, 5, 0.25]
    # q2: a (first turn) and e (session 1, the last): age 0, position 0
    assert f.loc["q2"].tolist() == [2, 0.0, 5, 0.0]
    assert f.loc["q3", "evidence_count"] == 0 and math.isnan(f.loc["q3", "evidence_age"])


def test_table_means_per_bin():
    scores = pd.DataFrame({"question_id": ["q1", "q2", "q3"], "metric": ["r@10"] * 3, "value": [0.0, 0.5, 1.0],
                           "skip": [None] * 3})
    table = difficulty_table("d", question_features(*_gold()), {"bm25": scores}, "r@10")
    count = table[table.feature == "evidence_count"].set_index("bin")
    assert count["mean"].to_dict() == {"0": 1.0, "1": 0.0, "2": 0.5} and count.n.to_dict() == {"0": 1, "1": 1, "2": 1}
    position = table[table.feature == "evidence_position"].set_index("bin")
    assert position["mean"].to_dict() == {"0–.25": 0.5, ".25–.5": 0.0}
    assert "**evidence count**" in difficulty_markdown(table)
