"""Exact counts, items and normalisation counts on the real benchmark files (figures from MANIFEST.md)."""

from __future__ import annotations

import pytest


def test_locomo_counts(parsed):
    d = parsed["locomo"]
    tables = d.tables()
    assert d.counts["conversations"] == 10
    assert d.counts["sessions"] == 272
    assert d.counts["turns"] == 5882
    assert d.counts["turns_with_images"] == 910
    assert d.counts["questions"] == 1986
    assert d.counts["questions_by_category"] == {"1": 282, "2": 321, "3": 96, "4": 841, "5": 446}
    assert tables["questions"]["question_id"].is_unique
    assert tables["haystacks"]["haystack_id"].nunique() == 10


def test_locomo_items(parsed):
    tables = parsed["locomo"].tables()
    turn = tables["turns"].set_index("item_id").loc["D1:3"]
    # conv-26 is the first conversation, so D1:3 is unique to it among the rows of conv-26
    first = tables["turns"][(tables["turns"].conversation_id == "conv-26") & (tables["turns"].item_id == "D1:3")]
    assert first.iloc[0]["text"] == "I went to a LGBTQ support group yesterday and it was so powerful."
    assert first.iloc[0]["speaker"] == "Caroline"
    assert first.iloc[0]["session_date"] == "2023-05-08T13:56:00"
    assert len(turn) == 10  # every conversation has a D1:3
    q = tables["questions"].set_index("question_id").loc["conv-26_q0"]
    assert q["question"] == "When did Caroline go to the LGBTQ support group?"
    assert q["answer"] == "7 May 2023" and q["category"] == 2 and q["question_type"] == "temporal"
    assert q["split"] == "tune"
    assert tables["questions"].set_index("question_id").loc["conv-26_q1", "split"] == "holdout"
    qrels = tables["qrels"]
    assert list(qrels[qrels.question_id == "conv-26_q0"].item_id) == ["D1:3"]


def test_locomo_normalisations(parsed):
    log = parsed["locomo"].log
    assert log.count("date_key_without_session") == 16  # conv-26: 35 date keys, 19 sessions
    assert log.count("adversarial_answer_only") == 444
    assert log.count("answer_and_adversarial_answer") == 2
    assert log.count("answer_not_string") == 6
    assert log.count("empty_evidence") == 4
    # the 9 malformed evidence strings: 4 packed lists split, 2 repaired, 3 dropped
    assert log.count("evidence_list_in_one_string") == 4
    assert log.count("evidence_malformed_repaired") == 2
    assert log.count("evidence_dangling_dropped") == 3
    assert log.count("evidence_duplicate_weighted") == 1  # conv-50 qa[5] lists D4:5 twice
    assert log.count("evidence_all_dropped") == 0
    # 2,815 raw strings - 9 malformed - 1 duplicate (kept as weight 2) + 13 split parts + 2 repaired
    assert parsed["locomo"].counts["evidence_items"] == 2820
    q = parsed["locomo"].tables()["qrels"]
    weights = q[q.question_id == "conv-50_q5"].set_index("item_id").relevance.to_dict()
    assert weights == {"D4:5": 2.0, "D5:5": 1.0}
    q = parsed["locomo"].tables()["qrels"]
    assert list(q[q.question_id == "conv-43_q18"].item_id).count("D11:26") == 1
    assert set(q[q.question_id == "conv-26_q37"].item_id) >= {"D8:6", "D9:17"}


def test_locomo_adversarial_answers(parsed):
    questions = parsed["locomo"].tables()["questions"]
    cat5 = questions[questions.category == 5]
    assert cat5["answer"].isna().sum() == 444
    assert cat5["adversarial_answer"].notna().sum() == 446


def test_procedural_counts(parsed):
    d = parsed["procedural"]
    assert d.counts["trajectories"] == 336
    assert d.counts["steps"] == 4542
    assert d.counts["queries"] == 40
    assert d.counts["labels"] == 893
    assert d.counts["queries_by_tier"] == {"EASY": 15, "MEDIUM": 14, "HARD": 11}
    qrels = d.tables()["qrels"]
    assert qrels.relevance.value_counts().to_dict() == {6.0: 364, 7.0: 193, 10.0: 147, 9.0: 111, 8.0: 78}
    assert len(qrels[qrels.question_id == "easy_1"]) == 19
    assert qrels.set_index(["question_id", "item_id"]).loc[("easy_1", "alfworld_22"), "relevance"] == 10.0


def test_procedural_duplicate_query_text_is_flagged(parsed):
    d = parsed["procedural"]
    assert d.log.count("duplicate_query_text") == 1
    qrels = d.tables()["qrels"]
    assert len(qrels[qrels.question_id == "medium_12"]) == 19
    assert len(qrels[qrels.question_id == "hard_14"]) == 21


def test_procedural_trajectory_events(parsed):
    turns = parsed["procedural"].tables()["turns"]
    first = turns[turns.session_id == "alfworld_0"].sort_values("turn_index")
    assert first.iloc[0]["kind"] == "task"
    assert first.iloc[0]["text"] == "find two laptop and put them in bed."
    assert first.iloc[1]["action"] == "go to diningtable 1"
    assert first.iloc[1]["state"].startswith("You are in the middle of a room")


def test_longmemeval_fragment(parsed):
    d = parsed["longmemeval"]
    tables = d.tables()
    assert d.counts["questions"] == 2
    sizes = tables["haystacks"].groupby("haystack_id").size().to_dict()
    assert sizes == {"852ce960": 39, "ba358f49": 41}
    assert d.counts["turns_in_distinct_sessions"] == 396 + 409
    q = tables["qrels"]
    sessions = q[(q.question_id == "852ce960") & (q.granularity == "session")]
    assert sorted(sessions.item_id) == ["answer_3a6f1e82_1", "answer_3a6f1e82_2"]
    # two evidence user turns per question
    assert (q[q.granularity == "turn"].groupby("question_id").size() == 2).all()
    user_turns = tables["turns"][tables["turns"].role == "user"]
    assert len(user_turns) == 197 + 204
    assert tables["questions"].set_index("question_id").loc["852ce960", "question_date"] == "2023-12-18T04:17:00"
    assert d.log.as_list() == []


@pytest.mark.parametrize("kind", ["locomo", "procedural", "longmemeval"])
def test_splits_alternate_by_index(parsed, kind):
    questions = parsed[kind].tables()["questions"]
    assert list(questions["split"]) == ["tune" if i % 2 == 0 else "holdout" for i in range(len(questions))]
