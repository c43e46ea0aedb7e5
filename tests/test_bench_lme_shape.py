"""The scale benchmark's generator: same seed same bytes, the upstream schema, and sharing counted by hand."""

from __future__ import annotations

from collections import Counter

from bench.lme_shape import Shape, counts, generate, write
from membench.benchmarks.registry import parse_dataset

# 4 questions x 5 sessions, 2 answer sessions each -> 3 fillers from a pool of ceil(4 * 3 / 2) = 6.
# Windows start at w * 6 // 4 = 0, 1, 3, 4: {0,1,2} {1,2,3} {3,4,5} {4,5,0}, so each filler is in 2 haystacks.
# Every 2nd question (indexes 1 and 3) is an `_abs` one.
TINY = Shape(questions=4, sessions=5, turns=4, user_words=6, assistant_words=10, reuse=2.0,
             min_answers=2, max_answers=2, abstention_every=2, seed=7)


def test_same_seed_same_bytes_other_seed_other_text(tmp_path):
    first, again, other = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    write(TINY, first)
    write(TINY, again)
    write(Shape(**{**TINY.__dict__, "seed": 8}), other)
    assert first.read_bytes() == again.read_bytes()
    assert first.read_bytes() != other.read_bytes()
    assert "never report" in (tmp_path / "a.about.txt").read_text()


def test_sharing_and_evidence_counted_by_hand():
    records = generate(TINY)
    uses = Counter(sid for r in records for sid in r["haystack_session_ids"] if sid.startswith("synth_"))
    assert uses == {f"synth_{i:06d}": 2 for i in range(6)}
    assert [r["question_id"].endswith("_abs") for r in records] == [False, True, False, True]
    assert counts(records)["distinct_sessions"] == 6 + 4 * 2
    assert counts(records)["session_slots"] == 20
    for r in records:
        sessions = dict(zip(r["haystack_session_ids"], r["haystack_sessions"]))
        flagged = [t for sid in r["answer_session_ids"] for t in sessions[sid] if t.get("has_answer")]
        assert len(r["answer_session_ids"]) == 2
        assert len(flagged) == (0 if r["question_id"].endswith("_abs") else 2)
        assert all(t["role"] == "user" and r["answer"] in t["content"] for t in flagged)
        assert not any("has_answer" in t for sid, s in sessions.items() if sid.startswith("synth_") for t in s)


def test_parses_with_the_longmemeval_parser(tmp_path):
    path = tmp_path / "synthetic-lme-s.json"
    about = write(TINY, path)
    data = parse_dataset("longmemeval", path)
    # Sessions are keyed by date + content, and a shared filler has its haystack's dates: 20 slots, 20 keys.
    slot_turns = sum(len(s) for r in generate(TINY) for s in r["haystack_sessions"])
    assert data.counts == {"questions": 4, "abstention_questions": 2, "distinct_sessions": 20,
                           "turns_in_distinct_sessions": slot_turns, "haystack_sessions": 20,
                           "questions_with_repeated_sessions": 0}
    assert about["counts"]["distinct_sessions"] == 14
    qrels = Counter(q["granularity"] for q in data.qrels)
    assert qrels == {"session": 4, "turn": 4}  # 2 answerable questions x 2 answer sessions x 1 evidence turn


def test_every_nth_question_lists_a_filler_twice(tmp_path):
    """repeat_every=2: questions 1 and 3 list one filler a second time (the real LongMemEval-S quirk); the rest of
    the file is what it was without repeats, and the parser keeps both listings."""
    shape = Shape(**{**TINY.__dict__, "repeat_every": 2})
    records, plain = generate(shape), generate(TINY)
    assert [len(r["haystack_session_ids"]) for r in records] == [5, 6, 5, 6]
    for with_repeat, without in zip(records, plain):
        ids = with_repeat["haystack_session_ids"]
        again = [sid for sid, n in Counter(ids).items() if n > 1]
        assert len(again) == (len(ids) - 5) and all(sid.startswith("synth_") for sid in again)
        assert sorted(set(ids)) == sorted(without["haystack_session_ids"])
    assert counts(records)["questions_with_repeated_sessions"] == 2
    write(shape, tmp_path / "repeats.json")
    data = parse_dataset("longmemeval", tmp_path / "repeats.json")
    assert data.counts["questions_with_repeated_sessions"] == 2 and data.counts["haystack_sessions"] == 22
