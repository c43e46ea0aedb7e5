"""Procedural benchmark metrics: full-label trec measures and the upstream runner's formulas."""

import math

import pytest

from membench.benchmarks.procedural import metrics as procedural
L2 = math.log2

LABELS = {"t1": 10.0, "t2": 6.0, "t3": 8.0, "t4": 7.0, "t5": 9.0, "t6": 6.0}
# 11 items; t4 is 11th, outside the upstream runner's retrieved top 10
RANKED = ["t3", "x1", "t2", "x2", "t1", "x3", "x4", "x5", "x6", "x7", "t4"]


def test_upstream_gain_table():
    # int(score / 3.33), clipped to 0..3
    assert [procedural.upstream_gain(s) for s in (0, 3.32, 3.33, 6, 7, 8, 9, 10)] == [0, 0, 1, 1, 2, 2, 2, 3]


def test_upstream_compatible_hand_case():
    u = procedural.upstream_compatible(RANKED, LABELS)
    # retrieved L = top 10: relevant (>= 6) are t3 (rank 1), t2 (rank 3), t1 (rank 5) -> 3 "relevant retrieved"
    assert u["upstream/P@1"] == 1.0
    assert u["upstream/P@3"] == pytest.approx(2 / 3)
    assert u["upstream/P@5"] == pytest.approx(3 / 5)
    assert u["upstream/P@10"] == pytest.approx(3 / 10)
    # recall over relevant *retrieved* (3), not over the 6 labels
    assert u["upstream/R@1"] == pytest.approx(1 / 3)
    assert u["upstream/R@3"] == pytest.approx(2 / 3)
    assert u["upstream/R@5"] == 1.0
    assert u["upstream/R@10"] == 1.0
    # F1@1 = 2 * 1 * (1/3) / (4/3) = 0.5; F1@3 = 2/3; F1@5 = 2*.6*1/1.6 = 0.75; F1@10 = .6/1.3
    assert u["upstream/F1@1"] == pytest.approx(0.5)
    assert u["upstream/F1@3"] == pytest.approx(2 / 3)
    assert u["upstream/F1@5"] == pytest.approx(0.75)
    assert u["upstream/F1@10"] == pytest.approx(0.6 / 1.3)
    # gains: t3 8 -> 2, t2 6 -> 1, t1 10 -> 3; ideal = the same top-k gains re-sorted
    assert u["upstream/nDCG@1"] == 1.0
    # @3: [2,0,1] -> 2 + 1/log2(4) = 2.5; ideal [2,1,0] -> 2 + 1/log2(3) = 2.6309298 -> 0.9502344
    assert u["upstream/nDCG@3"] == pytest.approx(2.5 / (2 + 1 / L2(3)))
    assert u["upstream/nDCG@3"] == pytest.approx(0.9502344, abs=1e-7)
    # @5: [2,0,1,0,3] -> 2.5 + 3/log2(6) = 3.6605584; ideal [3,2,1] -> 3 + 2/log2(3) + 1/2 = 4.7618595 -> 0.7687246
    assert u["upstream/nDCG@5"] == pytest.approx((2.5 + 3 / L2(6)) / (3.5 + 2 / L2(3)))
    assert u["upstream/nDCG@5"] == pytest.approx(0.7687246, abs=1e-7)
    assert u["upstream/nDCG@10"] == pytest.approx(u["upstream/nDCG@5"])
    # AP over relevant retrieved: (1/1 + 2/3 + 3/5) / 3 = 0.7555556 (t4 at rank 11 is not retrieved)
    assert u["upstream/AP"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert set(u) == {f"upstream/{m}@{k}" for m in ("P", "R", "F1", "nDCG") for k in (1, 3, 5, 10)} | {"upstream/AP"}


def test_upstream_ndcg_ideal_is_the_retrieved_gains_resorted():
    # one weak relevant item (t2, gain 1) first and nothing else: nDCG@3 = 1 and R@3 = 1,
    # although t1 (gain 3) and four more relevant items were never retrieved
    u = procedural.upstream_compatible(["t2", "x1", "x2"], LABELS, ks=(3,))
    assert u["upstream/nDCG@3"] == 1.0
    assert u["upstream/R@3"] == 1.0
    assert u["upstream/AP"] == 1.0
    # the same item at rank 3: [0,0,1] -> 1/log2(4) = 0.5 over the re-sorted [1,0,0] -> 1
    u = procedural.upstream_compatible(["x1", "x2", "t2"], LABELS, ks=(3,))
    assert u["upstream/nDCG@3"] == 0.5
    assert u["upstream/AP"] == pytest.approx(1 / 3)
    none = procedural.upstream_compatible(["x1", "x2"], LABELS, ks=(1, 3))
    assert all(v == 0.0 for v in none.values())


def test_full_label_measures_hand_case():
    m = procedural.measures(RANKED, LABELS)
    # 6 labels >= 6 are relevant; top 5 holds t3, t2, t1
    assert m["P@5"] == pytest.approx(0.6)
    assert m["R@5"] == pytest.approx(3 / 6)
    assert m["R@10"] == pytest.approx(3 / 6)
    # AP includes t4 at rank 11: (1 + 2/3 + 3/5 + 4/11) / 6 = 2.6303030 / 6 = 0.4383838
    assert m["AP"] == pytest.approx((1 + 2 / 3 + 3 / 5 + 4 / 11) / 6)
    # nDCG@5 graded: [8,0,6,0,10] -> 8 + 6/2 + 10/log2(6) = 14.8685281
    # ideal from all labels [10,9,8,7,6]: 10 + 9/log2(3) + 8/2 + 7/log2(5) + 6/log2(6) = 25.0142205 -> 0.5944030
    assert m["nDCG@5"] == pytest.approx((11 + 10 / L2(6)) / (14 + 9 / L2(3) + 7 / L2(5) + 6 / L2(6)))
    assert m["nDCG@5"] == pytest.approx(0.5944030, abs=1e-7)
    assert m["judged@5"] == pytest.approx(3 / 5)
    assert m["judged@10"] == pytest.approx(3 / 10)
    assert m["RR"] == 1.0


def test_question_rows_merges_both():
    rows = procedural.question_rows(RANKED, LABELS)
    assert rows["AP"] == pytest.approx(0.4383838, abs=1e-7)
    assert rows["upstream/AP"] == pytest.approx(0.7555556, abs=1e-7)
