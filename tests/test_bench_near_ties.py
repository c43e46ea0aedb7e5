"""The near-tie count of bench/near_ties.py on a run built by hand: ties, gaps under each threshold, those between
items of different relevance, and those of them at a cut-off."""

from __future__ import annotations

import pandas as pd

from bench.near_ties import near_ties


def test_near_ties_by_hand():
    scores = {"q1": [0.9, 0.9, 0.8999995, 0.8, 0.79999, 0.7], "q2": [0.5, 0.4999999, 0.3]}
    run = pd.DataFrame([(q, r, f"{q}-d{r}", s, "turn") for q, ss in scores.items() for r, s in enumerate(ss, 1)],
                       columns=["question_id", "rank", "item_id", "score", "granularity"])
    qrels = pd.DataFrame([("q1", "q1-d3", "turn", 1.0), ("q2", "q2-d2", "turn", 1.0)],
                         columns=["question_id", "item_id", "granularity", "relevance"])
    # q1 gaps: 0 (a tie), 5e-7 (at rank 2, no cut-off, between d2 and the relevant d3), 0.0999995, 0.8 - 0.79999 = 1.0000000000065512e-05 (not
    # below 1e-5), 0.09999; q2: 1e-7 at rank 1 (a cut-off) between the irrelevant d1 and the relevant d2, 0.1999999.
    assert near_ties(run, qrels, (1e-6, 1e-5), top=10) == {
        "pairs": 7, "ties": 1, "below 1e-06": 2, "differ 1e-06": 2, "cut-off 1e-06": 1,
        "below 1e-05": 2, "differ 1e-05": 2, "cut-off 1e-05": 1}
    assert near_ties(run, qrels, (1e-6,), top=2)["pairs"] == 4  # ranks 1-2 and 2-3 of each question
