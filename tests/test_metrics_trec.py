"""trec.measures: hand-computed cases and a cross-check against ir_measures."""

import math
import random

import pytest

from membench.metrics import trec

L2 = math.log2

# qrels: a=3, b=2, c=2 (tie with b), d=0 (judged non-relevant), e=1; x and y are unjudged.
QRELS = {"a": 3, "b": 2, "c": 2, "d": 0, "e": 1}
RANKED = ["b", "x", "a", "d", "e", "y"]


def test_hand_case_threshold_1():
    m = trec.measures(RANKED, QRELS, ks=(1, 3, 5, 10))
    # relevant (gain >= 1): a, b, c, e -> 4; retrieved relevant at ranks 1 (b), 3 (a), 5 (e)
    assert m["P@1"] == 1.0
    assert m["P@3"] == pytest.approx(2 / 3)
    assert m["P@5"] == pytest.approx(3 / 5)
    assert m["P@10"] == pytest.approx(3 / 10)  # divides by k although only 6 were retrieved
    assert m["R@1"] == pytest.approx(1 / 4)
    assert m["R@3"] == pytest.approx(2 / 4)
    assert m["R@5"] == pytest.approx(3 / 4)
    assert m["R@10"] == pytest.approx(3 / 4)
    # F1@3 = 2 * (2/3) * (1/2) / (2/3 + 1/2) = (2/3) / (7/6) = 4/7
    assert m["F1@3"] == pytest.approx(4 / 7)
    # gains down the run: 2, 0, 3, 0, 1, 0; ideal = all positive qrel gains sorted: 3, 2, 2, 1 (b/c tie)
    # nDCG@1 = 2 / 3
    assert m["nDCG@1"] == pytest.approx(2 / 3)
    # nDCG@3 = (2 + 3/log2 4) / (3 + 2/log2 3 + 2/log2 4) = 3.5 / 5.2618595 = 0.6651641
    assert m["nDCG@3"] == pytest.approx(3.5 / (3 + 2 / L2(3) + 1.0))
    assert m["nDCG@3"] == pytest.approx(0.6651641, abs=1e-7)
    # nDCG@5 = (3.5 + 1/log2 6) / (5.2618595 + 1/log2 5) = 3.8868528 / 5.6925361 = 0.6827981
    assert m["nDCG@5"] == pytest.approx((3.5 + 1 / L2(6)) / (4 + 2 / L2(3) + 1 / L2(5)))
    assert m["nDCG@5"] == pytest.approx(0.6827981, abs=1e-7)
    # AP = (1/1 + 2/3 + 3/5) / 4 = 2.2666667 / 4
    assert m["AP"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 4)
    assert m["RR"] == 1.0
    # judged: b, a, d, e carry qrels (d with 0 counts as judged); x, y do not
    assert m["judged@1"] == 1.0
    assert m["judged@3"] == pytest.approx(2 / 3)
    assert m["judged@5"] == pytest.approx(4 / 5)
    assert m["judged@10"] == pytest.approx(4 / 10)
    assert list(m) == trec.metric_names((1, 3, 5, 10))


def test_threshold_changes_binary_measures_not_gains():
    m = trec.measures(RANKED, QRELS, ks=(5,), rel_threshold=2)
    # relevant (gain >= 2): a, b, c -> 3; in top 5: b (1), a (3)
    assert m["P@5"] == pytest.approx(2 / 5)
    assert m["R@5"] == pytest.approx(2 / 3)
    assert m["AP"] == pytest.approx((1 + 2 / 3) / 3)
    # nDCG keeps the raw gains, so it is the same as with threshold 1
    assert m["nDCG@5"] == pytest.approx(trec.measures(RANKED, QRELS, ks=(5,))["nDCG@5"])


def test_rr_and_missed():
    m = trec.measures(["x", "y", "e"], QRELS, ks=(1, 3))
    assert m["RR"] == pytest.approx(1 / 3)
    assert m["P@1"] == 0.0 and m["F1@1"] == 0.0 and m["nDCG@1"] == 0.0
    assert trec.measures(["x"], QRELS, ks=(1,))["RR"] == 0.0
    assert trec.measures(["x"], QRELS, ks=(1,))["AP"] == 0.0


def test_k_larger_than_list():
    m = trec.measures(["a"], {"a": 1}, ks=(10,))
    assert m["P@10"] == pytest.approx(0.1)
    assert m["R@10"] == 1.0
    assert m["nDCG@10"] == 1.0
    assert m["F1@10"] == pytest.approx(2 * 0.1 / 1.1)
    assert m["judged@10"] == pytest.approx(0.1)


def test_empty_ranking():
    m = trec.measures([], {"a": 1}, ks=(1,))
    assert m == {"P@1": 0.0, "R@1": 0.0, "F1@1": 0.0, "nDCG@1": 0.0, "judged@1": 0.0, "AP": 0.0, "RR": 0.0}


def test_empty_relevant_set_is_nan_but_judged_is_counted():
    m = trec.measures(["d", "x"], {"d": 0}, ks=(1, 2))
    for name in ("P@1", "R@1", "F1@1", "nDCG@1", "P@2", "AP", "RR"):
        assert math.isnan(m[name]), name
    assert m["judged@1"] == 1.0
    assert m["judged@2"] == 0.5
    assert math.isnan(trec.measures(["x"], {}, ks=(1,))["AP"])


def test_repeats_in_run_are_dropped():
    assert trec.measures(["a", "a", "b"], {"a": 1, "b": 1}, ks=(2,)) == trec.measures(["a", "b"], {"a": 1, "b": 1}, ks=(2,))


def test_bad_k():
    with pytest.raises(ValueError):
        trec.measures(["a"], {"a": 1}, ks=(0,))


# ------------------------------------------------------------------------------------------------ ir_measures

ir_measures = pytest.importorskip("ir_measures")


def _random_query(rng: random.Random, qid: str):
    docs = [f"d{i}" for i in range(25)]
    judged = rng.sample(docs, rng.randint(3, 18))
    qrels = {d: rng.choice([0, 0, 1, 1, 2, 3]) for d in judged}
    if not any(g >= 2 for g in qrels.values()):
        qrels[judged[0]] = 2  # keep at least one relevant at both thresholds
    ranked = rng.sample(docs, rng.randint(1, 20))
    return qrels, ranked


@pytest.mark.parametrize("threshold", [1, 2])
def test_cross_check_ir_measures(threshold):
    from ir_measures import AP, RR, P, R, nDCG

    ks = (1, 3, 5, 10)
    wanted = {}
    for k in ks:
        wanted[f"P@{k}"] = P(rel=threshold) @ k
        wanted[f"R@{k}"] = R(rel=threshold) @ k
        wanted[f"nDCG@{k}"] = nDCG @ k  # graded: raw qrel gains
    wanted["AP"] = AP(rel=threshold)
    wanted["RR"] = RR(rel=threshold)

    rng = random.Random(1234 + threshold)
    for q in range(40):
        qid = f"q{q}"
        qrels, ranked = _random_query(rng, qid)
        ir_qrels = [ir_measures.Qrel(qid, d, g) for d, g in qrels.items()]
        # distinct descending scores, so ir_measures' sort keeps our order
        ir_run = [ir_measures.ScoredDoc(qid, d, float(len(ranked) - i)) for i, d in enumerate(ranked)]
        ref = {}
        for metric in ir_measures.iter_calc(list(wanted.values()), ir_qrels, ir_run):
            ref[metric.measure] = metric.value
        ours = trec.measures(ranked, qrels, ks=ks, rel_threshold=threshold)
        for name, measure in wanted.items():
            assert ours[name] == pytest.approx(ref.get(measure, 0.0), abs=1e-9), (qid, name, qrels, ranked)
