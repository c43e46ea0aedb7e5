"""Efficiency measures (membench.metrics.efficiency, membench.scoring.efficiency, membench.report.efficiency), on
cases small enough to count by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from membench.datasets.item_tokens import count_tokens, item_tokens, reading_text
from membench.metrics.efficiency import budget_recall, latency_summary, read_within, tokens_at_k
from membench.report.efficiency import pareto
from membench.scoring import efficiency
from membench.scoring.tables import Gold


def test_latency_percentiles_interpolate_between_searches():
    # 1, 2, 3, 4 ms: p50 halfway between 2 and 3; p95 = 3 + 0.85 x 1; p99 = 3 + 0.97 x 1 (numpy's linear rule)
    assert latency_summary([0.001, 0.002, 0.003, 0.004]) == {"searches": 4, "p50": 2.5, "p95": 3.85, "p99": 3.97,
                                                              "mean": 2.5}
    assert latency_summary([]) == {"searches": 0, "p50": None, "p95": None, "p99": None, "mean": None}


def test_tokens_and_budget_take_whole_results_in_rank_order():
    tokens = [30, 50, 40]
    assert [tokens_at_k(tokens, k) for k in (1, 2, 5)] == [30, 80, 120]
    assert [read_within(tokens, b) for b in (29, 30, 79, 80, 119, 500)] == [0, 1, 1, 2, 2, 3]
    units = [{"a"}, {"b", "c"}, {"d"}]  # the second result is a session holding turns b and c
    assert budget_recall(units, tokens, {"c", "d"}, 80) == 0.5  # a, then b + c fit (80); d would not
    assert budget_recall(units, tokens, {"c", "d"}, 29) == 0.0
    assert budget_recall(units, tokens, {"c", "d"}, 120) == 1.0
    assert math.isnan(budget_recall(units, tokens, set(), 120))


def test_cl100k_counts_are_those_of_the_published_tokenizer():
    # cl100k_base ids of "hello world" are [15339, 1917]; the packaged file is checked by tiktoken against its sha256
    assert count_tokens(["hello world", "I adopted a puppy named Max last spring."]) == [2, 9]
    assert reading_text("Look!", "a dog") == "Look! [shares image: a dog]" and reading_text("Hi", None) == "Hi"


def tiny_gold() -> tuple[Gold, pd.DataFrame]:
    """One question over two sessions: s1 = turns t1 ("hello world", 2 tokens), t2 (9 tokens); s2 = t3 (2)."""
    turns = pd.DataFrame({"session_key": ["k1", "k1", "k2"], "session_id": ["s1", "s1", "s2"],
                          "item_id": ["t1", "t2", "t3"], "turn_index": [0, 1, 0], "role": ["user"] * 3,
                          "text": ["hello world", "I adopted a puppy named Max last spring.", "hello world"],
                          "caption": [None, None, None]})
    questions = pd.DataFrame({"question_id": ["q1"], "haystack_id": ["h1"], "split": ["all"],
                              "question_type": ["x"], "category": [None], "tier": [None], "gold_issue": [None]})
    haystacks = pd.DataFrame({"haystack_id": ["h1", "h1"], "position": [0, 1], "session_key": ["k1", "k2"]})
    qrels = pd.DataFrame({"question_id": ["q1", "q1"], "item_id": ["t2", "s1"], "granularity": ["turn", "session"],
                          "relevance": [1.0, 1.0]})
    gold = Gold(questions, turns, haystacks, qrels)
    return gold, item_tokens(turns)


def test_efficiency_rows_of_a_session_run_and_a_turn_run():
    gold, tokens = tiny_gold()
    assert list(tokens.tokens) == [2, 9, 2]
    run = pd.DataFrame({"question_id": ["q1"] * 4, "rank": [1, 2, 1, 2], "item_id": ["s2", "s1", "t3", "t1"],
                        "score": [2.0, 1.0, 2.0, 1.0], "granularity": ["session", "session", "turn", "turn"]})
    rows = efficiency.score(run, gold, tokens, ("session", "turn"), budget=10)
    values = dict(zip(rows.metric, rows.value))
    # sessions: s2 (2 tokens) then s1 (11): within 10 tokens only s2 is read, which holds no evidence (t2)
    assert values["session/tokens@1"] == 2 and values["session/tokens@5"] == 13
    assert values["session/budget_recall@10tok"] == 0.0
    # turns: t3 (2) then t1 (2): both read, neither is t2
    assert values["turn/tokens@5"] == 4 and values["turn/budget_recall@10tok"] == 0.0
    rows = efficiency.score(run, gold, tokens, ("session", "turn"), budget=13)
    assert dict(zip(rows.metric, rows.value))["session/budget_recall@13tok"] == 1.0  # s1 fits now: covers t2


def test_the_pareto_front_keeps_what_nothing_beats():
    points = {"fast": (1.0, 0.5), "good": (10.0, 0.9), "worse": (10.0, 0.6), "tie": (1.0, 0.5), "slow": (20.0, 0.9)}
    assert pareto(points) == ["fast", "good", "tie"]


@pytest.mark.parametrize("budget", [0, 5])
def test_a_question_without_gold_is_left_out(budget):
    gold, tokens = tiny_gold()
    gold.qrels = gold.qrels.iloc[0:0]
    run = pd.DataFrame({"question_id": ["q1"], "rank": [1], "item_id": ["t1"], "score": [1.0], "granularity": ["turn"]})
    rows = efficiency.score(run, gold, tokens, ("turn",), budget=budget)
    assert rows.skip.notna().all() and rows.value.isna().all()
