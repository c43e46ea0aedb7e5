"""BEAM: the parsed counts on the published files (MANIFEST §4), and the measures of change on hand-computed cases."""
from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from conftest import shared_path
from membench.benchmarks.beam import change
from membench.benchmarks.beam.parse import parse
from membench.benchmarks.registry import benchmark
from membench.errors import InputError
from membench.scoring.tables import Gold

pytestmark = pytest.mark.data


@pytest.fixture(scope="module")
def beam100k():
    return parse(shared_path("beam", "100K"))


@pytest.fixture(scope="module")
def beam500k():
    return parse(shared_path("beam", "500K"))


def _by_ability(data, pred) -> Counter:
    return Counter(q["question_type"] for q in data.questions if pred(q))


def test_100k_counts_as_published(beam100k):
    d = beam100k
    assert {k: d.counts[k] for k in ("chats", "sessions", "messages", "questions", "questions_with_gold",
                                      "gold_messages")} == {"chats": 20, "sessions": 82, "messages": 5094,
                                                            "questions": 400, "questions_with_gold": 355,
                                                            "gold_messages": 1094}
    assert set(_by_ability(d, lambda q: True).values()) == {40}  # 10 abilities, 2 per chat
    assert Counter(q["gold_issue"] for q in d.questions if q["gold_issue"]) == {"no_source_ids": 40,
                                                                                 "empty_source_ids": 5}
    assert _by_ability(d, lambda q: q["gold_issue"] == "no_source_ids") == {"abstention": 40}
    # every id named, repeats and both sides included: 1,109 (856 user, 253 assistant messages)
    role_of = {(t["conversation_id"], t["item_id"]): t["role"] for t in d.turns}
    named = [role_of[q.split("/")[0], r["item_id"]] for r in d.gold_roles for q in [r["question_id"]]]
    repeats = sum(e["count"] for e in d.log.as_list() if e["code"] == "repeated_source_id")
    assert len(named) + repeats == 1109 and repeats == 4
    # MANIFEST: 856 user and 253 assistant ids; the 4 repeats dropped are user messages
    assert Counter(named) == {"user": 852, "assistant": 253}
    assert sum(1 for t in d.turns if t["role"] == "assistant") == 2547
    truncated = [e for e in d.log.as_list() if e["code"] == "truncated_chat_file"]
    assert truncated[0]["count"] == 10  # 10 of the 20 chats ship chat_trunecated.json


def test_500k_counts_as_published(beam500k):
    d = beam500k
    assert (d.counts["chats"], d.counts["sessions"], d.counts["messages"], d.counts["questions"],
            d.counts["questions_with_gold"]) == (35, 350, 38058, 700, 629)
    repeats = sum(e["count"] for e in d.log.as_list() if e["code"] == "repeated_source_id")
    assert len(d.gold_roles) + repeats == 2701


def test_change_coverage_counts_each_case(beam100k, beam500k):
    """MANIFEST §4's table: sides naming the same ids, empty sides, orderings out of conversation order."""
    assert beam100k.counts["change"] == {
        "contradiction_resolution": {"questions": 40, "scored": 37, "sides_equal": 3},
        "event_ordering": {"questions": 40, "scored": 40, "gold_order_not_conversation_order": 7},
        "knowledge_update": {"questions": 40, "scored": 37, "sides_equal": 2, "side_empty": 1},
        "temporal_reasoning": {"questions": 40, "scored": 34, "sides_equal": 6}}
    assert beam500k.counts["change"]["knowledge_update"] == {"questions": 70, "scored": 62, "no_source_ids": 1,
                                                             "sides_equal": 4, "side_empty": 3}
    assert beam500k.counts["change"]["temporal_reasoning"]["sides_equal"] == 7
    assert beam500k.counts["change"]["contradiction_resolution"]["sides_equal"] == 1


def test_roles_name_messages_of_their_own_chat(beam100k):
    d = beam100k
    messages = {(t["conversation_id"], t["item_id"]) for t in d.turns}
    assert all((r["question_id"].split("/")[0], r["item_id"]) in messages for r in d.gold_roles)
    ku = [r for r in d.gold_roles if r["question_id"] == "1/knowledge_update/0"]
    assert {r["role"] for r in ku} == {"original_info", "updated_info"}


# ------------------------------------------------------------------------------- measures on hand cases

def test_knowledge_update_fresh_and_stale():
    sides = {"original_info": ["o"], "updated_info": ["u"]}
    rank = change.ranks(["x", "u", "o"])  # u at 2, o at 3
    m = change.pair_measures("knowledge_update", sides, rank, ks=(1, 2, 3))
    assert (m["change/fresh@1"], m["change/fresh@2"], m["change/fresh@3"]) == (0.0, 1.0, 1.0)
    assert (m["change/stale@1"], m["change/stale@2"], m["change/stale@3"]) == (0.0, 0.0, 0.0)
    rank = change.ranks(["o", "x", "u"])  # the original first: stale until the update comes in, never fresh
    m = change.pair_measures("knowledge_update", sides, rank, ks=(1, 2, 3))
    assert [m[f"change/stale@{k}"] for k in (1, 2, 3)] == [1.0, 1.0, 0.0]
    assert [m[f"change/fresh@{k}"] for k in (1, 2, 3)] == [0.0, 0.0, 0.0]
    # a side of several messages counts at its best-ranked one; the original missing is still fresh
    m = change.pair_measures("knowledge_update", {"original_info": ["o"], "updated_info": ["u1", "u2"]},
                             change.ranks(["x", "u2"]), ks=(1, 2))
    assert (m["change/fresh@1"], m["change/fresh@2"], m["change/stale@2"]) == (0.0, 1.0, 0.0)


def test_contradiction_both_and_one_side_and_temporal_both():
    sides = {"first_statement": ["a"], "second_statement": ["b", "c"]}
    m = change.pair_measures("contradiction_resolution", sides, change.ranks(["a", "x", "c"]), ks=(1, 2, 3))
    assert [m[f"change/both_sides@{k}"] for k in (1, 2, 3)] == [0.0, 0.0, 1.0]
    assert [m[f"change/one_side@{k}"] for k in (1, 2, 3)] == [1.0, 1.0, 0.0]
    m = change.pair_measures("temporal_reasoning", {"first_event": ["a"], "second_event": ["b"]},
                             change.ranks(["b", "a"]), ks=(1, 2))
    assert (m["change/both_events@1"], m["change/both_events@2"]) == (0.0, 1.0)


def test_event_ordering_recall_and_kendall_tau():
    """Gold order e0 < e1 < e2; in the conversation they stand at 10, 30, 20 (e2 before e1). Retrieved: e2's
    message first, then e0's, then e1's. At k=2: e0 and e2 found, conversation order agrees with gold (tau 1).
    At k=3: pairs (e0,e1) and (e0,e2) agree, (e1,e2) disagrees: tau = (2 - 1) / 3."""
    events = [["m0"], ["m1", "m1b"], ["m2"]]
    position = {"m0": 10, "m1": 30, "m1b": 40, "m2": 20}
    m = change.ordering_measures(events, change.ranks(["m2", "m0", "m1b"]), position, ks=(1, 2, 3))
    assert [m[f"change/event_recall@{k}"] for k in (1, 2, 3)] == [pytest.approx(1 / 3), pytest.approx(2 / 3), 1.0]
    assert [m[f"change/all_events@{k}"] for k in (1, 2, 3)] == [0.0, 0.0, 1.0]
    assert "change/order_tau@1" not in m  # one event found: no order to judge
    assert m["change/order_tau@2"] == 1.0
    assert m["change/order_tau@3"] == pytest.approx(1 / 3)
    reverse = change.ordering_measures([["a"], ["b"]], change.ranks(["a", "b"]), {"a": 5, "b": 1}, ks=(2,))
    assert reverse["change/order_tau@2"] == -1.0


def test_tau_b_is_scipys_to_the_bit_with_ties_and_is_zero_for_a_constant_ordering():
    """Hand case: gold 0 < 1 < 2, found at 5, 5, 9. Pairs (0,1) tie in found, (0,2) and (1,2) agree: tau-b =
    2 / sqrt(3 - 0) / sqrt(3 - 1). Then scipy's own figure on 2,000 random orderings, ties in both, to the bit."""
    from scipy.stats import kendalltau

    assert change.tau_b([0, 1, 2], [5, 5, 9]) == 2 / math.sqrt(3) / math.sqrt(2)
    assert change.tau_b([0, 1, 2], [7, 7, 7]) == 0.0 and change.tau_b([0], [3]) == 0.0
    rng = random.Random(7)
    checked = 0
    for _ in range(2000):
        n = rng.randint(2, 12)
        gold = [rng.randint(0, n) for _ in range(n)]
        found = [rng.randint(0, 2 * n) for _ in range(n)]
        expected = kendalltau(gold, found, variant="b").statistic
        if math.isnan(expected):
            assert change.tau_b(gold, found) == 0.0
            continue
        assert change.tau_b(gold, found) == float(expected), (gold, found)
        checked += 1
    assert checked > 1800  # 1,891 with this seed: the rest have a constant side, where scipy gives NaN


def test_unusable_sides_are_named():
    assert change.usable_sides("knowledge_update", {"original_info": ["a"], "updated_info": ["a"]}) == "sides_equal"
    assert change.usable_sides("knowledge_update", {"original_info": [], "updated_info": ["a"]}) == "side_empty"
    assert change.usable_sides("knowledge_update", {"original_info": ["a"], "updated_info": ["b"]}) is None


# ------------------------------------------------------------------------------------ the scorer, whole

def _tiny_beam(root: Path) -> Path:
    """One chat, two batches: messages 0-3 in batch 1 (March 1), 4-5 in batch 2 (March 8)."""
    chat = root / "1"
    (chat / "probing_questions").mkdir(parents=True)
    def msg(i, role, text, anchor=None):
        return {"role": role, "id": i, "content": text, **({"time_anchor": anchor} if anchor else {})}
    batches = [{"batch_number": 1, "time_anchor": None, "turns": [
                    [msg(0, "user", "my budget is 100", "March-01-2024"), msg(1, "assistant", "noted")],
                    [msg(2, "user", "I use flask"), msg(3, "assistant", "ok")]]},
               {"batch_number": 2, "time_anchor": None, "turns": [
                    [msg(4, "user", "my budget is now 200", "March-08-2024"), msg(5, "assistant", "updated")]]}]
    (chat / "chat.json").write_text(json.dumps(batches))
    questions = {
        "knowledge_update": [{"question": "What is my budget?", "answer": "200", "rubric": ["says 200"],
                              "source_chat_ids": {"original_info": [0], "updated_info": [4]}}],
        "abstention": [{"question": "What is my dog's name?", "ideal_response": "Not mentioned.",
                        "rubric": ["says it is not mentioned"]}],
        "event_ordering": [{"question": "In what order?", "answer": "budget, flask, new budget",
                            "rubric": ["budget", "flask"], "source_chat_ids": [0, [2, 3], 4]}],
    }
    (chat / "probing_questions" / "probing_questions.json").write_text(json.dumps(questions))
    return root


def test_the_scorer_on_a_tiny_chat(tmp_path):
    data = parse(_tiny_beam(tmp_path / "beam"))
    assert [t["session_date"] for t in data.turns][::4] == ["2024-03-01T00:00:00", "2024-03-08T00:00:00"]
    assert [r for r in data.rubrics if r["question_id"] == "1/knowledge_update/0"] == [
        {"question_id": "1/knowledge_update/0", "position": 0, "text": "says 200"}]
    data.write(tmp_path / "out", {})
    gold = Gold.load(tmp_path / "out")
    run = pd.DataFrame([
        # knowledge update: the original (0) first, the update (4) third
        *[{"question_id": "1/knowledge_update/0", "rank": r, "item_id": i, "score": 1.0 / r, "granularity": "turn"}
          for r, i in enumerate(["0", "1", "4"], 1)],
        # ordering: 4, 2, 0 (the reverse of the gold order)
        *[{"question_id": "1/event_ordering/0", "rank": r, "item_id": i, "score": 1.0 / r, "granularity": "turn"}
          for r, i in enumerate(["4", "2", "0"], 1)],
    ]).astype({"question_id": "string", "item_id": "string", "granularity": "string"})
    scores = benchmark("beam").score(run, gold)
    value = {(q, m): v for q, m, v in zip(scores.question_id, scores.metric, scores.value)}
    ku = "1/knowledge_update/0"
    assert (value[ku, "change/stale@1"], value[ku, "change/fresh@1"]) == (1.0, 0.0)
    assert (value[ku, "change/stale@5"], value[ku, "change/fresh@5"]) == (0.0, 0.0)  # both in, the original above
    assert (value[ku, "turn/recall@1"], value[ku, "turn/recall@5"], value[ku, "turn/recall_all@5"]) == (0.5, 1.0, 1.0)
    eo = "1/event_ordering/0"
    # found in the conversation's order 0, 2, 4 = the gold order, although retrieved reversed: tau 1
    assert value[eo, "change/all_events@5"] == 1.0 and value[eo, "change/order_tau@5"] == 1.0
    assert value[eo, "turn/recall@5"] == pytest.approx(3 / 4)  # message 3 (the second of event 1) not retrieved
    skipped = scores[scores.question_id == "1/abstention/0"]
    assert set(skipped.skip) == {"no_source_ids"} and skipped.value.isna().all()


def test_a_dangling_source_id_names_the_file_and_question(tmp_path):
    root = _tiny_beam(tmp_path / "beam")
    path = root / "1" / "probing_questions" / "probing_questions.json"
    questions = json.loads(path.read_text())
    questions["knowledge_update"][0]["source_chat_ids"]["updated_info"] = [99]
    path.write_text(json.dumps(questions))
    with pytest.raises(InputError) as err:
        parse(root)
    assert str(err.value.path) == str(path) and "1/knowledge_update/0" in str(err.value) and "99" in str(err.value)


def test_nan_free_measures_on_the_real_100k_gold(beam100k, tmp_path):
    """The perfect run (every question's gold, in conversation order) scores 1 on every recall and fresh@k, 0 on
    stale@k, and tau 1 on the orderings whose gold order is the conversation's."""
    beam100k.write(tmp_path, {})
    gold = Gold.load(tmp_path)
    rows = []
    for qid, g in gold.qrels[gold.qrels.granularity == "turn"].groupby("question_id", sort=False):
        roles = gold.roles[gold.roles.question_id == qid]
        updated = list(roles[roles.role == "updated_info"].item_id)
        order = updated + [i for i in g.item_id if i not in updated]
        rows += [{"question_id": qid, "rank": r, "item_id": i, "score": 1.0 / r, "granularity": "turn"}
                 for r, i in enumerate(order, 1)]
    run = pd.DataFrame(rows).astype({"question_id": "string", "item_id": "string", "granularity": "string"})
    scores = benchmark("beam").score(run, gold)
    counted = scores[scores.skip.isna()]
    mean = counted.groupby("metric").value.mean()
    assert mean["turn/recall@50"] == 1.0 and mean["change/fresh@50"] == 1.0 and mean["change/stale@50"] == 0.0
    assert counted[counted.metric == "change/fresh@50"].question_id.nunique() == 37
    tau = counted[counted.metric == "change/order_tau@50"].value
    assert len(tau) == 40 and ((tau - 1.0).abs() < 1e-12).sum() == 33 and not math.isnan(tau.sum())
