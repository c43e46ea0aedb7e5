"""Broken benchmark files end in one clear InputError naming file, record and field — never a deep
traceback, never a silent success. Targeted cases plus hypothesis fuzzing over every field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from membench.benchmarks.registry import benchmark
from membench.benchmarks.registry import parse_dataset
from membench.errors import InputError


def lme_doc():
    turn = lambda role, text, ans=None: {"role": role, "content": text, **({"has_answer": ans} if ans is not None else {})}
    return [{
        "question_id": "q1", "question_type": "single-session-user", "question": "Where did I park?",
        "question_date": "2023/05/30 (Tue) 10:00", "answer": "Level 3",
        "answer_session_ids": ["answer_a_1"],
        "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 09:00"],
        "haystack_session_ids": ["noise_1", "answer_a_1"],
        "haystack_sessions": [[turn("user", "hello"), turn("assistant", "hi")],
                              [turn("user", "I parked on level 3", True), turn("assistant", "noted", False)]],
    }]


def locomo_doc():
    return [{
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a cat"}],
        },
        "qa": [{"question": "What did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
               {"question": "What did Bo adopt?", "adversarial_answer": "a cat", "evidence": ["D1:2"],
                "category": 5}],
    }]


def procedural_docs():
    corpus = {"metadata": {}, "trajectories": [
        {"task_instance_id": "alfworld_0", "task_description": "put a mug in the sink",
         "state_action_pairs": [{"step_id": 1, "state": "You see a mug", "action": "take mug 1"}],
         "total_steps": 1, "source": "agentinstruct"},
        {"task_instance_id": "alfworld_1", "task_description": "heat an egg",
         "state_action_pairs": [{"step_id": 1, "state": "You see an egg", "action": "take egg 1"}],
         "total_steps": 1, "source": "agentinstruct"}]}
    queries = {"metadata": {}, "queries": [
        {"query_id": "easy_1", "tier": "EASY", "query_type": "placement", "query_text": "Put a mug in the sink",
         "relevant_trajectories": [{"trajectory_id": "alfworld_0", "relevance_score": 9.0, "reasoning": "same"}]}]}
    return corpus, queries


def write_case(tmp: Path, kind: str, doc, queries=None) -> Path:
    """Write a case; for procedural `doc` is the corpus, `queries` the query bank."""
    if kind == "procedural":
        folder = tmp / "proc"
        folder.mkdir(exist_ok=True)
        for name, content in (("agentinstruct_trajectories.json", doc), ("query_bank.json", queries)):
            (folder / name).write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
        return folder
    path = tmp / f"{kind}.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


def parse_case(tmp: Path, kind: str, doc, queries=None):
    return parse_dataset(kind, write_case(tmp, kind, doc, queries))


def expect_error(tmp, kind, doc, queries=None, *, match: str, record: str | None = None, field: str | None = None):
    with pytest.raises(InputError, match=match) as info:
        parse_case(tmp, kind, doc, queries)
    assert info.value.path.startswith(str(tmp))
    if record is not None:
        assert info.value.record is not None and record in info.value.record
    if field is not None:
        assert info.value.field == field
    return info.value


def test_valid_bases_parse(tmp_path):
    assert parse_case(tmp_path, "longmemeval", lme_doc()).counts["questions"] == 1
    assert parse_case(tmp_path, "locomo", locomo_doc()).counts["questions"] == 2
    assert parse_case(tmp_path, "procedural", *procedural_docs()).counts["labels"] == 1


@pytest.mark.parametrize("kind", ["longmemeval", "locomo"])
def test_truncated_json(tmp_path, kind):
    text = json.dumps(lme_doc() if kind == "longmemeval" else locomo_doc())
    err = expect_error(tmp_path, kind, text[: len(text) // 2], match="invalid or truncated JSON")
    assert err.record is None


def test_missing_field_names_record_and_field(tmp_path):
    doc = lme_doc()
    del doc[0]["question"]
    expect_error(tmp_path, "longmemeval", doc, match="missing required field", record="question_id=q1",
                 field="question")


def test_mistyped_nested_field(tmp_path):
    doc = locomo_doc()
    doc[0]["conversation"]["session_1"][1]["text"] = 7
    expect_error(tmp_path, "locomo", doc, match="expected a string, got int", record="sample_id=conv-1",
                 field="conversation.session_1[1].text")


def test_duplicate_question_ids(tmp_path):
    doc = lme_doc() * 2
    expect_error(tmp_path, "longmemeval", doc, match="duplicate question_id 'q1'")


def test_duplicate_dia_ids(tmp_path):
    doc = locomo_doc()
    doc[0]["conversation"]["session_1"][1]["dia_id"] = "D1:1"
    expect_error(tmp_path, "locomo", doc, match="duplicate dia_id 'D1:1'", record="sample_id=conv-1")


def test_duplicate_trajectory_ids(tmp_path):
    corpus, queries = procedural_docs()
    corpus["trajectories"][1]["task_instance_id"] = "alfworld_0"
    expect_error(tmp_path, "procedural", corpus, queries, match="duplicate task_instance_id 'alfworld_0'")


def test_qrel_pointing_at_no_item(tmp_path):
    corpus, queries = procedural_docs()
    queries["queries"][0]["relevant_trajectories"][0]["trajectory_id"] = "alfworld_99"
    expect_error(tmp_path, "procedural", corpus, queries, match="not in the corpus", record="query_id=easy_1",
                 field="relevant_trajectories[0].trajectory_id")
    doc = lme_doc()
    doc[0]["answer_session_ids"] = ["answer_zzz"]
    expect_error(tmp_path, "longmemeval", doc, match="not in the haystack", field="answer_session_ids")


def test_empty_haystacks(tmp_path):
    doc = lme_doc()
    for key in ("haystack_sessions", "haystack_session_ids", "haystack_dates"):
        doc[0][key] = []
    doc[0]["answer_session_ids"] = []
    expect_error(tmp_path, "longmemeval", doc, match="empty haystack", field="haystack_sessions")
    doc = locomo_doc()
    del doc[0]["conversation"]["session_1"], doc[0]["conversation"]["session_1_date_time"]
    expect_error(tmp_path, "locomo", doc, match="empty haystack")
    corpus, queries = procedural_docs()
    corpus["trajectories"] = []
    expect_error(tmp_path, "procedural", corpus, queries, match="empty haystack")


def test_bad_dates_and_categories(tmp_path):
    doc = lme_doc()
    doc[0]["question_date"] = "yesterday"
    expect_error(tmp_path, "longmemeval", doc, match="YYYY/MM/DD", field="question_date")
    doc = locomo_doc()
    doc[0]["qa"][0]["category"] = 9
    expect_error(tmp_path, "locomo", doc, match="category must be 1-5", field="category")


def test_failed_parse_stage_leaves_no_output(tmp_path):
    from membench.stages import parse

    doc = lme_doc()
    doc[0]["haystack_dates"] = ["2023/05/01 (Mon) 09:00"]
    src = write_case(tmp_path, "longmemeval", doc)
    out = tmp_path / "out"
    with pytest.raises(InputError, match="haystack lists differ in length"):
        parse.run(benchmark("longmemeval"), src, out)
    assert not out.exists() or list(out.iterdir()) == []


# ---------------------------------------------------------------- fuzzing

def paths(node, prefix=()):
    """Every position in a JSON tree as a tuple of keys/indices."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield prefix + (k,)
            yield from paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield prefix + (i,)
            yield from paths(v, prefix + (i,))


def mutate(doc, path, how):
    doc = copy.deepcopy(doc)
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "delete":
        del parent[last]
    else:
        parent[last] = how
    return doc


# Fields the parsers read; deleting one of these or giving it a value of the wrong JSON type must fail.
REQUIRED = {
    "longmemeval": {"question_id": str, "question_type": str, "question": str, "question_date": str,
                    "answer": (str, int, float), "answer_session_ids": list, "haystack_dates": list,
                    "haystack_session_ids": list, "haystack_sessions": list, "role": str, "content": str},
    "locomo": {"sample_id": str, "conversation": dict, "session_1": list, "session_1_date_time": str,
               "speaker": str, "dia_id": str, "text": str, "qa": list, "question": str, "category": int,
               "evidence": list},
    "procedural": {"trajectories": list, "task_instance_id": str, "task_description": str,
                   "state_action_pairs": list, "state": str, "action": str, "queries": list, "query_id": str,
                   "tier": str, "query_type": str, "query_text": str, "relevant_trajectories": list,
                   "trajectory_id": str, "relevance_score": (int, float)},
}
WRONG = [None, 12345, "not-a-list", [], {}, True]


def wrong_for(kind_type):
    types = kind_type if isinstance(kind_type, tuple) else (kind_type,)
    return [w for w in WRONG if not (isinstance(w, types) and not (isinstance(w, bool) and bool not in types))]


def base(kind):
    if kind == "longmemeval":
        return lme_doc(), None
    if kind == "locomo":
        return locomo_doc(), None
    return procedural_docs()


def required_cases(kind):
    """(which document, path, replacement) for every required field in the base documents."""
    docs = base(kind)
    cases = []
    for which, doc in enumerate(docs):
        if doc is None:
            continue
        for path in paths(doc):
            key = path[-1]
            if isinstance(key, str) and key in REQUIRED[kind]:
                cases.append((which, path, "delete"))
                cases.extend((which, path, w) for w in wrong_for(REQUIRED[kind][key]))
    return cases


@pytest.mark.parametrize("kind", ["longmemeval", "locomo", "procedural"])
def test_every_required_field_broken_fails_clearly(tmp_path, kind):
    cases = required_cases(kind)
    assert len(cases) > 40
    for which, path, how in cases:
        docs = list(base(kind))
        docs[which] = mutate(docs[which], path, how)
        with pytest.raises(InputError) as info:
            parse_case(tmp_path, kind, *docs)
        assert str(tmp_path) in str(info.value), (path, how)
        assert info.value.field or info.value.record or "JSON" in str(info.value) or "empty" in str(info.value), (path, how)


@st.composite
def random_mutation(draw, kind):
    docs = list(base(kind))
    which = draw(st.sampled_from([i for i, d in enumerate(docs) if d is not None]))
    all_paths = list(paths(docs[which]))
    path = draw(st.sampled_from(all_paths))
    how = draw(st.sampled_from(["delete", None, -1, 3.5, "", "x", [], {}, [None], {"a": 1}, True]))
    docs[which] = mutate(docs[which], path, how)
    truncate = draw(st.none() | st.integers(min_value=0, max_value=400))
    if truncate is not None:
        text = json.dumps(docs[which])
        docs[which] = text[: min(truncate, len(text) - 1)]
    return docs


@pytest.mark.parametrize("kind", ["longmemeval", "locomo", "procedural"])
def test_fuzzed_inputs_end_in_input_error_or_parse(tmp_path, kind):
    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(random_mutation(kind))
    def check(docs):
        try:
            parsed = parse_case(tmp_path, kind, *docs)
        except InputError as err:
            assert str(tmp_path) in str(err)
            return
        # a mutation the parser accepted must still yield a consistent dataset
        tables = parsed.tables()
        assert len(tables["questions"]) > 0 and len(tables["haystacks"]) > 0
        items = set(tables["turns"]["item_id"]) | set(tables["turns"]["session_id"])
        assert set(tables["qrels"]["item_id"]) <= items

    check()
