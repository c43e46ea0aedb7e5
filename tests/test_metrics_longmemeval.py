"""LongMemEval upstream-parity metrics: hand-computed cases."""

import json
import math
from pathlib import Path

import pytest

from membench.benchmarks.longmemeval import metrics as lme
L2 = math.log2


# ------------------------------------------------------------------------------------------ DCG / evaluate

def test_upstream_dcg_ranks_1_and_2_weigh_the_same():
    # g1 + g2/log2(2) + g3/log2(3) = 1 + 1 + 1/1.5849625
    assert lme.dcg([1, 1, 1], 3) == pytest.approx(2 + 1 / L2(3))
    assert lme.dcg([0, 1], 2) == lme.dcg([1, 0], 2) == 1.0
    assert lme.dcg([], 5) == 0.0
    assert lme.dcg([1, 1, 1], 1) == 1.0


def test_second_place_scores_full_ndcg_with_one_correct_doc():
    corpus = ["s1", "answer_a", "s2"]
    # top 2 = [s1, answer_a]: DCG = 0 + 1/log2(2) = 1 = ideal [1, 0] -> 1.0 (standard nDCG would give 0.63)
    assert lme.evaluate(["s1", "answer_a", "s2"], corpus, {"answer_a"}, 2) == (1.0, 1.0, 1.0)
    # ... but at k=1 it is missed
    assert lme.evaluate(["s1", "answer_a", "s2"], corpus, {"answer_a"}, 1) == (0.0, 0.0, 0.0)


CORPUS = ["s1", "answer_a", "s2", "answer_b", "s3"]
CORRECT = {"answer_a", "answer_b"}
RANKED = ["s1", "answer_a", "s2", "s3", "answer_b"]


def test_session_level_hand_case():
    # k=1: top {s1}: nothing found; ideal [1] -> 1, actual [0] -> 0
    assert lme.evaluate(RANKED, CORPUS, CORRECT, 1) == (0.0, 0.0, 0.0)
    # k=3: gains [0,1,0] -> 1/log2(2) = 1; ideal [1,1,0] -> 1 + 1 = 2; ndcg 0.5
    assert lme.evaluate(RANKED, CORPUS, CORRECT, 3) == (1.0, 0.0, 0.5)
    # k=5: gains [0,1,0,0,1] -> 1 + 1/log2(5) = 1.4306766; ideal 2 -> 0.7153383
    any5, all5, nd5 = lme.evaluate(RANKED, CORPUS, CORRECT, 5)
    assert (any5, all5) == (1.0, 1.0)
    assert nd5 == pytest.approx((1 + 1 / L2(5)) / 2)
    assert nd5 == pytest.approx(0.7153383, abs=1e-7)
    # k=10 > list length: same as the whole list
    assert lme.evaluate(RANKED, CORPUS, CORRECT, 10) == (any5, all5, nd5)


def test_abstention_empty_correct_set():
    # no correct doc: recall_any = 0, recall_all = 1 (all() of nothing), ndcg = 0 (ideal DCG 0)
    assert lme.evaluate(["s2", "s1"], ["s1", "s2"], set(), 1) == (0.0, 1.0, 0.0)
    assert lme.evaluate(["s2", "s1"], ["s1", "s2"], set(), 50) == (0.0, 1.0, 0.0)


def test_ranked_id_outside_corpus_is_an_error():
    with pytest.raises(ValueError):
        lme.evaluate(["zzz"], ["s1"], set(), 1)


# ------------------------------------------------------------------------------------------ corpus ids

# (session_id, turn_index, role, has_answer)
ROWS = [
    ("sharegpt_A_0", 0, "user", None), ("sharegpt_A_0", 1, "assistant", None), ("sharegpt_A_0", 2, "user", None),
    ("answer_x_1", 0, "user", False), ("answer_x_1", 1, "assistant", False), ("answer_x_1", 2, "user", True),
    ("answer_x_1", 3, "assistant", False), ("answer_x_1", 4, "user", True),
    ("ultrachat_9", 0, "user", None), ("ultrachat_9", 1, "assistant", None),
    ("answer_y_2", 0, "user", True),
    # evidence only on the assistant side: no user evidence -> the session is renamed "noans"
    ("answer_z_3", 0, "user", False), ("answer_z_3", 1, "assistant", True),
]


def test_upstream_corpus_ids():
    ids = lme.upstream_corpus_ids(ROWS)
    assert ids.session_ids == ["sharegpt_A_0", "answer_x_1", "ultrachat_9", "answer_y_2", "noans_z_3"]
    # user turns only, numbered by position among all turns (1-based); non-evidence turns of answer sessions renamed
    assert ids.turn_ids == ["sharegpt_A_0_1", "sharegpt_A_0_3", "noans_x_1_1", "answer_x_1_3", "answer_x_1_5",
                            "ultrachat_9_1", "answer_y_2_1", "noans_z_3_1"]
    assert ids.turn_of[("answer_x_1", 0)] == "noans_x_1_1"
    assert ids.session_of["answer_z_3"] == "noans_z_3"
    assert lme.correct_ids(ids.session_ids) == {"answer_x_1", "answer_y_2"}
    assert lme.correct_ids(ids.turn_ids) == {"answer_x_1_3", "answer_x_1_5", "answer_y_2_1"}
    # str.replace rewrites every occurrence, as upstream does
    assert lme.turn_corpus_id("answer_answer_1", 0, False) == "noans_noans_1_1"
    assert lme.session_corpus_id("answer_q_1", [None, False]) == "noans_q_1"


def test_skip_reason():
    assert lme.skip_reason("abc_abs", True) == "abstention"
    assert lme.skip_reason("abc", False) == "no_target"
    assert lme.skip_reason("abc", True) is None


# ------------------------------------------------------------------------------------------ turn -> session

IDS = lme.upstream_corpus_ids(ROWS)
TURN_CORRECT = lme.correct_ids(IDS.turn_ids)
TURN_RANKED = ["answer_x_1_3", "noans_x_1_1", "answer_x_1_5", "sharegpt_A_0_1", "sharegpt_A_0_3",
               "answer_y_2_1", "ultrachat_9_1", "noans_z_3_1"]
# as sessions: answer_x_1, noans_x_1, answer_x_1, sharegpt_A_0, sharegpt_A_0, answer_y_2, ultrachat_9, noans_z_3
# session-level corpus = stripped turn corpus (8 entries): 3 of them (answer_x_1 twice, answer_y_2) are correct,
# so the ideal gains are [1, 1, 1, 0, ...]; ideal DCG@>=3 = 1 + 1 + 1/log2(3) = 2.6309298
IDEAL3 = 2 + 1 / L2(3)


def test_widening_k():
    sessions = [lme.strip_turn_id(t) for t in TURN_RANKED]
    assert sessions[:3] == ["answer_x_1", "noans_x_1", "answer_x_1"]
    # k=2: answer_x_1 and noans_x_1 are already two *different* sessions -> no widening
    assert lme.turn2session_k(sessions, 8, 2) == 2
    # k=3: the 3rd turn repeats answer_x_1 -> need 4 turns for 3 sessions
    assert lme.turn2session_k(sessions, 8, 3) == 4
    # k=4: turns 4 and 5 are both sharegpt_A_0 -> need 6 turns for 4 sessions
    assert lme.turn2session_k(sessions, 8, 4) == 6
    # k=7: only 6 distinct sessions exist -> the loop stops one past the corpus: 9
    assert lme.turn2session_k(sessions, 8, 7) == 9
    # k=10 > 8 corpus entries: the loop condition (k <= 8) fails at once -> k stays 10 (the whole list)
    assert lme.turn2session_k(sessions, 8, 10) == 10


def test_turn2session_hand_case():
    f = lambda k: lme.evaluate_turn2session(TURN_RANKED, IDS.turn_ids, TURN_CORRECT, k)  # noqa: E731
    # k=1 -> eff 1: [answer_x_1] found; answer_y_2 not; DCG 1 / ideal 1
    assert f(1) == (1.0, 0.0, 1.0)
    # k=2 -> eff 2: gains [1, 0] -> 1; ideal [1, 1] -> 2
    assert f(2) == (1.0, 0.0, 0.5)
    # k=3 -> eff 4: gains [1,0,1,0] -> 1 + 1/log2(3) = 1.6309298; / 2.6309298 = 0.6199062
    a, b, n = f(3)
    assert (a, b) == (1.0, 0.0)
    assert n == pytest.approx((1 + 1 / L2(3)) / IDEAL3)
    assert n == pytest.approx(0.6199062, abs=1e-7)
    # k=4 -> eff 6: gains [1,0,1,0,0,1] -> 1 + 1/log2(3) + 1/log2(6) = 2.0177826; / 2.6309298 = 0.7669466
    a, b, n = f(4)
    assert (a, b) == (1.0, 1.0)
    assert n == pytest.approx((1 + 1 / L2(3) + 1 / L2(6)) / IDEAL3)
    assert n == pytest.approx(0.7669466, abs=1e-7)
    # k=7 -> eff 9 and k=10 -> eff 10 (both the whole list): no further correct turns -> same numbers
    assert f(7) == f(10) == f(4)


def test_turn_level_same_ranking():
    # plain turn level, k=3: [answer_x_1_3, noans_x_1_1, answer_x_1_5] -> gains [1,0,1]
    a, b, n = lme.evaluate(TURN_RANKED, IDS.turn_ids, TURN_CORRECT, 3)
    assert (a, b) == (1.0, 0.0)
    assert n == pytest.approx((1 + 1 / L2(3)) / IDEAL3)


def test_question_rows_keys_and_values():
    session_ranked = ["answer_y_2", "sharegpt_A_0", "noans_z_3", "answer_x_1", "ultrachat_9"]
    rows = lme.question_rows(session_ranked=session_ranked, session_corpus_ids=IDS.session_ids,
                             turn_ranked=TURN_RANKED, turn_corpus_ids=IDS.turn_ids)
    assert list(rows) == lme.metric_names()
    assert len(rows) == 3 * 6 * 3
    assert rows["turn2session/ndcg_any@3"] == pytest.approx(0.6199062, abs=1e-7)
    assert rows["turn2session/recall_all@1"] == 0.0
    assert rows["turn/recall_all@5"] == 0.0  # answer_y_2_1 is 6th
    assert rows["turn/recall_all@10"] == 1.0
    # session level: gains [1,0,0,1,0]; k=5 -> 1 + 1/log2(4) = 1.5 over ideal 2
    assert rows["session/ndcg_any@5"] == pytest.approx(0.75)
    assert rows["session/recall_any@1"] == 1.0 and rows["session/recall_all@3"] == 0.0
    only_turn = lme.question_rows(turn_ranked=TURN_RANKED, turn_corpus_ids=IDS.turn_ids, ks=(1,))
    assert sorted(only_turn) == sorted(lme.metric_names(("turn", "turn2session"), (1,)))


def test_truncated_ranking_gives_the_same_numbers_within_its_length():
    full = lme.evaluate_turn2session(TURN_RANKED, IDS.turn_ids, TURN_CORRECT, 4)
    assert lme.evaluate_turn2session(TURN_RANKED[:6], IDS.turn_ids, TURN_CORRECT, 4) == full


# ------------------------------------------------------------------------------------------ real fragment

FRAGMENT = Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval" / "longmemeval_s_cleaned_partial_2q.json"


@pytest.mark.data
@pytest.mark.skipif(not FRAGMENT.exists(), reason="shared LongMemEval fragment not present")
def test_fragment_corpus_ids_and_oracle():
    records = {r["question_id"]: r for r in json.loads(FRAGMENT.read_text())}
    rec = records["852ce960"]
    rows = [(sid, i, t["role"], t.get("has_answer"))
            for sid, session in zip(rec["haystack_session_ids"], rec["haystack_sessions"])
            for i, t in enumerate(session)]
    ids = lme.upstream_corpus_ids(rows)
    assert len(ids.session_ids) == 39
    assert len(ids.turn_ids) == 197  # user turns
    assert lme.correct_ids(ids.session_ids) == {"answer_3a6f1e82_1", "answer_3a6f1e82_2"}
    assert len(lme.correct_ids(ids.turn_ids)) == 2
    # an oracle ranking (correct first, then corpus order) is perfect at every k >= 2
    correct = lme.correct_ids(ids.turn_ids)
    oracle = [t for t in ids.turn_ids if t in correct] + [t for t in ids.turn_ids if t not in correct]
    rows_q = lme.question_rows(turn_ranked=oracle, turn_corpus_ids=ids.turn_ids)
    for k in (3, 5, 10, 30, 50):
        for level in ("turn", "turn2session"):
            assert rows_q[f"{level}/recall_all@{k}"] == 1.0
            assert rows_q[f"{level}/ndcg_any@{k}"] == pytest.approx(1.0)
