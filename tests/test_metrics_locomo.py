"""LoCoMo evidence recall: hand-computed cases."""

import pytest

from membench.benchmarks.locomo import metrics as locomo
RANKED = ["D1:1", "D2:3", "D1:5", "D3:2"]


def test_share_of_evidence_in_top_k():
    ev = ["D1:5", "D3:2"]
    assert locomo.evidence_recall(RANKED, ev, 1) == 0.0  # top 1 = D1:1
    assert locomo.evidence_recall(RANKED, ev, 3) == 0.5  # D1:5 found, D3:2 is 4th
    assert locomo.evidence_recall(RANKED, ev, 5) == 1.0  # k beyond the list: the whole list


def test_empty_evidence_scores_one():
    assert locomo.evidence_recall(RANKED, [], 1) == 1.0
    assert locomo.evidence_recall([], [], 5) == 1.0


def test_missing_evidence_scores_zero():
    assert locomo.evidence_recall(RANKED, ["D9:9"], 50) == 0.0
    assert locomo.evidence_recall([], ["D1:1"], 5) == 0.0


def test_repeated_evidence_counts_per_entry_like_upstream():
    # conv-50 has evidence ["D4:5", "D4:5", "D5:5"]: upstream divides by len(evidence) = 3
    assert locomo.evidence_recall(["D4:5", "D1:1"], ["D4:5", "D4:5", "D5:5"], 1) == pytest.approx(2 / 3)
    assert locomo.evidence_recall(["D5:5", "D1:1"], ["D4:5", "D4:5", "D5:5"], 1) == pytest.approx(1 / 3)


def test_rows_and_ks():
    assert locomo.KS == (1, 5, 10, 25, 50)
    rows = locomo.question_rows(RANKED, ["D1:5", "D3:2"])
    assert rows == {"evidence_recall@1": 0.0, "evidence_recall@5": 1.0, "evidence_recall@10": 1.0,
                    "evidence_recall@25": 1.0, "evidence_recall@50": 1.0}
    assert list(rows) == locomo.metric_names()


def test_bad_k():
    with pytest.raises(ValueError):
        locomo.evidence_recall(RANKED, ["D1:1"], 0)
