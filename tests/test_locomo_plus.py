"""LoCoMo-Plus: the examples built from the published files (MANIFEST §5) -- counts, the seeded placement, speakers
and dates -- and the scorer on a hand-computed two-item case."""
from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from conftest import shared_path
from membench.benchmarks.locomo import parse as locomo
from membench.benchmarks.locomo_plus import parse as plus
from membench.benchmarks.registry import benchmark, parse_dataset
from membench.config import validate_config
from membench.datasets.tables import group_label
from membench.errors import InputError
from membench.scoring.tables import Gold


@pytest.fixture(scope="module")
def data_dir() -> Path:
    shared_path("locomo-plus", "locomo_plus.json")
    shared_path("locomo", "locomo10.json")
    return shared_path()


@pytest.fixture(scope="module")
def items(data_dir):
    return json.loads((data_dir / "locomo-plus" / "locomo_plus.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def built(data_dir):
    return parse_dataset("locomo-plus", data_dir)


def _haystacks(data) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for h in sorted(data.haystacks, key=lambda h: (h["haystack_id"], h["position"])):
        out.setdefault(h["haystack_id"], []).append(h["session_key"])
    return out


def _cue_sessions(data) -> dict[str, list[dict]]:
    """question id -> its cue session's turn rows."""
    out: dict[str, list[dict]] = {}
    for t in data.turns:
        if t["session_id"].endswith("/cue"):
            out.setdefault(t["session_id"][:-len("/cue")], []).append(t)
    return out


# ------------------------------------------------------------------------------------------ the published files


@pytest.mark.data
def test_counts(built, items):
    d = built
    assert len(items) == 401
    assert (d.counts["questions"], d.counts["haystacks"], len(_haystacks(d))) == (401, 401, 401)
    assert d.counts["questions_by_relation_type"] == {"causal": 101, "goal": 100, "state": 100, "value": 100}
    assert Counter(q["question_id"].split("-")[0] for q in d.questions) == Counter(i["relation_type"] for i in items)
    # the gold of each item is its cue dialogue's turns, as upstream splits the dialogue into lines
    lines = {f"{i['relation_type']}-{n}": [x for x in i["cue_dialogue"].split("\n") if x.strip()[:2] in ("A:", "B:")]
             for n, i in enumerate(items)}
    gold = Counter(r["question_id"] for r in d.qrels)
    assert gold == {qid: len(x) for qid, x in lines.items()}
    assert d.counts["items_by_cue_turns"] == {"1": 44, "2": 357} and d.counts["cue_turns"] == 758
    assert d.counts["cue_lines_with_both_speakers"] == 44  # B's reply glued onto A's line: one turn, as upstream
    # the LoCoMo sessions are shared by content key: LoCoMo's turns once, plus one session per cue
    assert (d.counts["locomo_turns"], d.counts["turns"], d.counts["sessions"]) == (5882, 5882 + 758, 272 + 401)
    assert len(d.turns) == len({(t["session_key"], t["turn_index"]) for t in d.turns})
    assert {q["gold_issue"] for q in d.questions} == {None}
    assert all(q["answer"] is None and q["category"] == 6 and q["tier"] is None for q in d.questions)
    assert {group_label(q) for q in d.questions} == {"6 cognitive"}


@pytest.mark.data
def test_every_time_gap_is_read_or_counted(built, items):
    read = {v: plus.gap_days(v) for v in {i["time_gap"] for i in items}}
    unread = {v for v, days in read.items() if days is None}
    assert unread == {"several months later", "several weeks later", "several years later", "a few weeks later",
                      "a couple of months later"}
    assert built.counts["time_gaps"] == {"read": 386, "unread": 15, "unread_values": {
        "a couple of months later": 1, "a few weeks later": 1, "several months later": 11, "several weeks later": 1,
        "several years later": 1}}
    assert sum(e["count"] for e in built.log.as_list() if e["code"] == "time_gap_unread") == 15
    assert (read["two months after the challenge ended"], read["around one week after the birth"],
            read["a year after"], read["about eight weeks later"], read["roughly three months later"],
            read["one year later"], read["a month later"]) == (60, 7, 365, 56, 90, 365, 30)
    assert all(days is None or days > 0 for days in read.values())


def test_gap_days_reads_as_upstream():
    """Upstream's reading: a number of its own (digits, one to twelve, a/an) then the unit; the first such pair
    counts; anything else is unread (upstream then takes 0 days)."""
    assert [plus.gap_days(s) for s in ("Two weeks later", "12 months later", "an year on", "twelve years later",
                                        "about 3 weeks later", "one month, then two weeks", "about 3weeks later",
                                        "thirteen weeks later", "several months later", "weeks later",
                                        "a few months later")] == [
        14, 360, 365, 4380, 21, 30, None, None, None, None, None]


# Placements for seed 0: item index -> (conversation, cue date, cue position among the haystack's sessions, number
# of sessions in the haystack, trigger date).
SEED_0 = {
    0: ("conv-47", "2022-10-31T20:57:00", 29, 32, "2022-11-14T20:57:00"),    # two weeks later
    2: ("conv-26", "2023-09-29T09:55:00", 16, 20, "2023-10-29T09:55:00"),    # about one month later
    20: ("conv-50", "2023-02-27T10:54:00", 0, 31, "2023-11-24T10:54:00"),    # nine months: before the first session
    56: ("conv-49", "2024-01-18T21:37:00", 25, 26, "2024-01-18T21:37:00"),   # several months later: unread, 0 days
    150: ("conv-42", "2022-11-04T00:06:00", 25, 30, "2022-11-18T00:06:00"),  # about two weeks later
    250: ("conv-50", "2023-08-26T10:54:00", 15, 31, "2023-11-24T10:54:00"),  # three months later
    400: ("conv-26", "2023-09-17T09:55:00", 16, 20, "2023-10-29T09:55:00"),  # around six weeks later
}


def _placement(data, index: int) -> tuple:
    q = data.questions[index]
    order, cue = _haystacks(data)[q["question_id"]], _cue_sessions(data)[q["question_id"]]
    return (q["conversation_id"], cue[0]["session_date"], order.index(cue[0]["session_key"]), len(order),
            q["question_date"])


@pytest.mark.data
def test_placements_for_seed_0_are_pinned_and_another_seed_moves_them(built, data_dir):
    assert {i: _placement(built, i) for i in SEED_0} == SEED_0
    assert built.counts["seed"] == 0
    assert built.counts["cue_position"] == {"first": 25, "between": 343, "last": 33}
    assert sum(built.counts["questions_by_conversation"].values()) == 401
    again = plus.parse(data_dir, seed=0)
    assert [q["conversation_id"] for q in again.questions] == [q["conversation_id"] for q in built.questions]
    other = plus.parse(data_dir, seed=1)
    moved = sum(a["conversation_id"] != b["conversation_id"] for a, b in zip(built.questions, other.questions))
    assert moved == 367
    assert [other.questions[i]["conversation_id"] for i in SEED_0] == [
        "conv-41", "conv-30", "conv-50", "conv-43", "conv-42", "conv-26", "conv-49"]
    assert other.counts["seed"] == 1


@pytest.mark.data
def test_speakers_are_the_conversations_own(built, items, data_dir):
    samples = {s["sample_id"]: s["conversation"] for s in
               json.loads((data_dir / "locomo" / "locomo10.json").read_text(encoding="utf-8"))}
    cues = _cue_sessions(built)
    q = built.questions[0]  # conv-47: speaker_a James, speaker_b John
    assert [(t["speaker"], t["role"]) for t in cues[q["question_id"]]] == [("James", "James"), ("John", "John")]
    assert cues[q["question_id"]][0]["text"] == "After learning to say 'no', I’ve felt a lot less stressed overall."
    assert q["question"] == "James: I ended up volunteering for that project, and now I'm totally overwhelmed."
    for q, item in zip(built.questions, items):
        conv = samples[q["conversation_id"]]
        sides = [line.strip()[0] for line in item["cue_dialogue"].split("\n") if line.strip()[:2] in ("A:", "B:")]
        names = {"A": conv["speaker_a"], "B": conv["speaker_b"]}
        assert [t["speaker"] for t in cues[q["question_id"]]] == [names[s] for s in sides]
        assert q["question"].startswith(f"{conv['speaker_a']}: ")  # every trigger is one line of A


@pytest.mark.data
def test_dates_follow_the_gap_and_sessions_are_in_date_order(built, items, data_dir):
    dates = {t["session_key"]: t["session_date"] for t in built.turns}
    last = {}
    for s in json.loads((data_dir / "locomo" / "locomo10.json").read_text(encoding="utf-8")):
        conv = s["conversation"]
        n = max(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
        last[s["sample_id"]] = datetime.fromisoformat(locomo.locomo_date(conv[f"session_{n}_date_time"]))
    cues, haystacks = _cue_sessions(built), _haystacks(built)
    for q, item in zip(built.questions, items):
        trigger = last[q["conversation_id"]] + timedelta(days=7)
        assert q["question_date"] == trigger.isoformat()
        cue = datetime.fromisoformat(cues[q["question_id"]][0]["session_date"])
        assert trigger - cue == timedelta(days=plus.gap_days(item["time_gap"]) or 0)
        order = [dates[k] for k in haystacks[q["question_id"]]]
        assert order == sorted(order)
        key = cues[q["question_id"]][0]["session_key"]
        after = haystacks[q["question_id"]][haystacks[q["question_id"]].index(key) + 1:]
        assert all(dates[k] > dates[key] for k in after)  # a session dated the same as the cue comes before it


@pytest.mark.data
def test_shares_locomos_sessions(built, locomo_dir):
    base = locomo.parse(locomo_dir)
    assert {t["session_key"] for t in base.turns} <= {t["session_key"] for t in built.turns}
    mine = [t for t in built.turns if not t["session_id"].endswith("/cue")]
    assert [(t["session_key"], t["item_id"], t["text"]) for t in mine] == [
        (t["session_key"], t["item_id"], t["text"]) for t in base.turns]


@pytest.mark.data
def test_reads_the_two_files_only(data_dir):
    record = benchmark("locomo-plus")
    assert record.files_read(data_dir) == [data_dir / "locomo-plus" / "locomo_plus.json",
                                           data_dir / "locomo" / "locomo10.json"]


def test_the_seed_is_a_locomo_plus_setting():
    config = {"datasets": {"plus": {"kind": "locomo-plus", "path": "x"}, "other": {"kind": "locomo", "path": "y"}}}
    validate_config(config)
    assert config["datasets"]["plus"]["seed"] == 0 and "seed" not in config["datasets"]["other"]
    with pytest.raises(InputError, match="takes no `seed`"):
        validate_config({"datasets": {"other": {"kind": "locomo", "path": "y", "seed": 3}}})
    with pytest.raises(ValueError, match="takes no option seed"):
        benchmark("locomo").parse_source(Path("."), seed=1)


# ------------------------------------------------------------------------------------------ a hand-built case


def _tiny(root: Path) -> Path:
    """Upstream's layout (both files side by side): one conversation of two sessions, two items."""
    root.mkdir(parents=True)
    conversation = {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:00 pm on 1 January, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I bought a bike."},
                      {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice one."}],
        "session_2_date_time": "1:00 pm on 1 March, 2023",
        "session_2": [{"speaker": "Bob", "dia_id": f"D2:{n}", "text": text} for n, text in enumerate(
            ("How is the bike?", "Fast.", "Ride it to work?", "Maybe."), 1)],
    }
    qa = [{"question": "What did Ann buy?", "answer": "a bike", "evidence": ["D1:1"], "category": 4}]
    (root / "locomo10.json").write_text(json.dumps([{"sample_id": "conv-1", "conversation": conversation, "qa": qa}]))
    (root / "locomo_plus.json").write_text(json.dumps([
        {"relation_type": "causal", "time_gap": "two weeks later", "trigger_query": "A: I walk to work now.",
         "cue_dialogue": "A: My knee hurts since the fall.\nB: Take it easy."},
        {"relation_type": "goal", "time_gap": "several months later", "trigger_query": "B: Tickets are booked!",
         "cue_dialogue": "A: I want to see Rome this year. B: Go for it."},
    ]))
    return root


def test_a_tiny_case_is_built_as_upstream_builds_it(tmp_path):
    data = plus.parse(_tiny(tmp_path / "plus"))
    cues = _cue_sessions(data)
    # trigger: 7 days after 1 March 13:00; cue 1: 14 days before it, between the sessions; cue 2: unread gap, 0 days
    assert [q["question_date"] for q in data.questions] == ["2023-03-08T13:00:00"] * 2
    assert [cues[q][0]["session_date"] for q in ("causal-0", "goal-1")] == ["2023-02-22T13:00:00",
                                                                            "2023-03-08T13:00:00"]
    assert [len(h) for h in _haystacks(data).values()] == [3, 3]
    assert [_haystacks(data)[q].index(cues[q][0]["session_key"]) for q in ("causal-0", "goal-1")] == [1, 2]
    assert [(t["item_id"], t["speaker"], t["text"]) for q in ("causal-0", "goal-1") for t in cues[q]] == [
        ("causal-0/cue:1", "Ann", "My knee hurts since the fall."), ("causal-0/cue:2", "Bob", "Take it easy."),
        ("goal-1/cue:1", "Ann", "I want to see Rome this year. B: Go for it.")]
    assert [q["question"] for q in data.questions] == ["Ann: I walk to work now.", "Bob: Tickets are booked!"]
    assert data.counts["cue_lines_with_both_speakers"] == 1 and data.counts["turns"] == 6 + 3
    unit = benchmark("locomo-plus").unit_format(cues["causal-0"][1]["session_date"], "Bob", "Take it easy.", None)
    assert unit == '(1:00 pm on 22 February, 2023) Bob said, "Take it easy."'


def test_the_scorer_on_two_items(tmp_path):
    data = plus.parse(_tiny(tmp_path / "plus"))
    data.write(tmp_path / "out", {})
    gold = Gold.load(tmp_path / "out")
    ranked = {
        # causal-0, gold cue:1 and cue:2: cue:2 at rank 2, cue:1 at rank 6
        "causal-0": ["D1:1", "causal-0/cue:2", "D1:2", "D2:1", "D2:2", "causal-0/cue:1", "D2:3"],
        # goal-1, gold its one cue turn: not retrieved at all
        "goal-1": ["D1:1", "D2:1", "D2:3"],
    }
    run = pd.DataFrame([{"question_id": q, "rank": r, "item_id": i, "score": 1.0 / r, "granularity": "turn"}
                        for q, items in ranked.items() for r, i in enumerate(items, 1)]).astype(
        {"question_id": "string", "item_id": "string", "granularity": "string"})
    scores = benchmark("locomo-plus").score(run, gold)
    value = {(q, m): v for q, m, v in zip(scores.question_id, scores.metric, scores.value)}
    assert [value["causal-0", f"evidence_recall@{k}"] for k in (1, 5, 10, 25, 50)] == [0.0, 0.5, 1.0, 1.0, 1.0]
    assert [value["goal-1", f"evidence_recall@{k}"] for k in (1, 5, 10, 25, 50)] == [0.0] * 5
    assert set(scores.question_type) == {"6 cognitive"} and scores.skip.isna().all()


def test_the_folder_must_hold_both_files(tmp_path):
    root = _tiny(tmp_path / "plus")
    (root / "locomo10.json").unlink()
    with pytest.raises(InputError, match="LoCoMo file not found"):
        plus.parse(root)
    shutil.rmtree(root)
    root.mkdir()
    with pytest.raises(InputError, match="LoCoMo-Plus file not found"):
        plus.parse(root)
    with pytest.raises(InputError, match="is a folder"):
        plus.parse(tmp_path / "nothing.json")
