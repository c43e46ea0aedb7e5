"""Answer-mode QA: LoCoMo subset and LongMemEval fragment through the real client; abstention, adversarial
and token-F1 rules on hand-made cases."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from membench.benchmarks.registry import benchmark
from membench.runs.registry import load_adapter
from membench.benchmarks.locomo.answer_f1 import adversarial_correct, f1_multi, f1_score, locomo_score, normalize_answer
from membench.qa.answer import NOT_MENTIONED, Excerpt, _choice_first, question_text, render_context, resolve_choice
from membench.qa.verdict import RULES, UNANSWERABLE, verdict_type
from membench.report.model_stages import qa_section
from membench.stages import qa
from membench.stages.rank import rank_dataset
from openai_server import FakeOpenAIServer, _norm, default_responder, prompt_input, prompt_task, verdict_fields

MODEL = "fake-model"


def config(server, **qa_opts) -> dict:
    return {"llm": {"model": MODEL, "base_url": server.url, "concurrency": 4, "backoff": 0.01, "budget_usd": None},
            "qa": qa_opts}


@pytest.fixture(scope="module")
def locomo_run(ingested, tmp_path_factory):
    path = tmp_path_factory.mktemp("locomo-run") / "bm25.parquet"
    rank_dataset(benchmark("locomo"), ingested["locomo"], load_adapter("bm25", {}), 10).to_parquet(path)
    return path


@pytest.fixture(scope="module")
def lme_run(ingested, tmp_path_factory):
    path = tmp_path_factory.mktemp("lme-run") / "bm25.parquet"
    rank_dataset(benchmark("longmemeval"), ingested["longmemeval"], load_adapter("bm25", {}), 10).to_parquet(path)
    return path


def test_locomo_first_20_of_conv26(ingested, locomo_run, tmp_path):
    folder = ingested["locomo"]
    questions = pd.read_parquet(folder / "questions.parquet").set_index("question_id")
    with FakeOpenAIServer() as server:
        out = qa.run(benchmark("locomo"), folder, locomo_run, tmp_path / "qa.parquet", tmp_path / "scores.parquet",
                     config(server, limit=20), tmp_path / "calls.jsonl", tmp_path / "cost.json", dataset="locomo",
                     adapter="bm25", progress=False)
        verdict_inputs = {prompt_input(b): b for b in server.requests if prompt_task(b) == "verdict"}
    assert list(out.question_id) == [f"conv-26_q{i}" for i in range(20)]
    cats = questions.loc[list(out.question_id), "category"].astype(int)
    n_llm = int((cats != 5).sum())
    assert server.by_task == {"answer": 20, "verdict": n_llm}
    assert (out.status == "ok").all() and (out.n_context == 10).all()
    assert (out.verdict_by == "rule").sum() == int((cats == 5).sum())
    # accuracy from the server's deterministic verdicts: gold (normalised) contained in the answer
    for row in out.itertuples():
        q = questions.loc[row.question_id]
        if int(q.category) == 5:
            assert row.correct == adversarial_correct(row.answer)
        else:
            assert row.correct == (_norm(q.answer) in _norm(row.answer))
        assert row.f1 == pytest.approx(locomo_score(int(q.category), row.answer, q.answer or ""))
    fields = [verdict_fields(t) for t in verdict_inputs]
    assert {f["TYPE"] for f in fields} <= {"multi-hop", "temporal", "open-domain", "single-hop"}
    # the answers' first sentence is the earliest retrieved excerpt (the fake answers with the input's first line)
    assert out.answer.str.match(r"^\[\d{4}-\d\d-\d\d \(\w{3}\) \d\d:\d\d\] (Caroline|Melanie): ").all()

    scores = pd.read_parquet(tmp_path / "scores.parquet")
    acc = scores[scores.metric == "qa/accuracy"]
    assert len(acc) == 20 and acc.skip.isna().all()
    assert acc.value.mean() == pytest.approx(out.correct.astype(float).mean())
    assert scores[scores.metric == "qa/f1"].value.tolist() == pytest.approx(out.f1.tolist())
    cost = json.loads((tmp_path / "cost.json").read_text())
    assert cost["summary"]["stages"]["qa-answer"]["calls"] == 20
    assert cost["summary"]["stages"]["qa-verdict"]["calls"] == n_llm
    md = qa_section({("locomo", "bm25"): out}, resamples=200)
    assert "| locomo | bm25 | 20 | 20 |" in md and "by category" in md and "2 temporal" in md


def test_longmemeval_fragment_and_abstention(ingested, lme_run, tmp_path):
    folder = ingested["longmemeval"]
    with FakeOpenAIServer() as server:
        out = qa.run(benchmark("longmemeval"), folder, lme_run, tmp_path / "qa.parquet", None, config(server),
                     tmp_path / "calls.jsonl", dataset="lme", adapter="bm25", progress=False)
        assert server.by_task == {"answer": 2, "verdict": 2}
        first_answer = next(b for b in server.requests if prompt_task(b) == "answer" and "pre-approved" in
                            b["messages"][1]["content"])
    assert list(out.question_id) == ["852ce960", "ba358f49"] and (out.status == "ok").all()
    assert out.f1.isna().all() and (out.verdict_by == "llm").all()
    text = first_answer["messages"][1]["content"]
    assert "Current date: 2023-12-18 (Mon) 04:17" in text and "\nuser: " in text and "\nassistant: " in text
    assert "Question: What was the amount I was pre-approved for" in text

    # a hand-made abstention question: the same data, one question turned into an `_abs` one
    abs_dir = tmp_path / "abs"
    shutil.copytree(folder, abs_dir)
    questions = pd.read_parquet(abs_dir / "questions.parquet")
    questions.loc[0, ["question_id", "is_abstention", "answer"]] = [
        "852ce960_abs", True, "The user never mentioned a mortgage from Chase."]
    questions.to_parquet(abs_dir / "questions.parquet")
    run = pd.read_parquet(lme_run)
    run["question_id"] = run.question_id.replace({"852ce960": "852ce960_abs"})
    run.to_parquet(tmp_path / "run_abs.parquet")

    def responder(body):  # the answerer declines everything
        if prompt_task(body) == "answer":
            return "Not mentioned in the conversation."
        return default_responder(body)

    with FakeOpenAIServer(responder) as server:
        out = qa.run(benchmark("longmemeval"), abs_dir, tmp_path / "run_abs.parquet", tmp_path / "qa2.parquet",
                     tmp_path / "s2.parquet", config(server), tmp_path / "calls2.jsonl", progress=False)
        verdicts = [b for b in server.requests if prompt_task(b) == "verdict"]
    by_id = out.set_index("question_id")
    assert bool(by_id.loc["852ce960_abs", "correct"]) is True  # declining is right for `_abs`
    assert bool(by_id.loc["ba358f49", "correct"]) is False  # and wrong for an answerable question
    abs_prompt = next(b for b in verdicts if "852ce960" not in json.dumps(b) and "pre-approved" in json.dumps(b))
    assert verdict_fields(prompt_input(abs_prompt))["TYPE"] == UNANSWERABLE
    assert RULES[UNANSWERABLE] in abs_prompt["messages"][1]["content"]


def test_locomo_adversarial_choices_and_rule(ingested, locomo_run, tmp_path):
    folder = ingested["locomo"]
    questions = pd.read_parquet(folder / "questions.parquet")
    cat5 = questions[(questions.category == 5) & (questions.haystack_id == "conv-26")].head(6)
    assert len(cat5) == 6

    def responder(body):  # always picks option (a)
        return "a" if prompt_task(body) == "answer" else default_responder(body)

    with FakeOpenAIServer(responder) as server:
        out = qa.run(benchmark("locomo"), folder, locomo_run, tmp_path / "qa.parquet", None,
                     config(server, question_ids=list(cat5.question_id)), tmp_path / "c.jsonl", progress=False)
        asked = [b["messages"][1]["content"] for b in server.requests]
    assert server.by_task == {"answer": 6}  # category 5 needs no verdict call
    for row, q in zip(out.itertuples(), cat5.itertuples()):
        a_is_not_mentioned = _choice_first(q.question_id)
        assert row.raw_answer == "a"
        assert row.answer == (NOT_MENTIONED if a_is_not_mentioned else q.adversarial_answer)
        assert bool(row.correct) is a_is_not_mentioned and row.f1 == float(a_is_not_mentioned)
        assert any("Select the correct answer: (a) " in t and q.question in t for t in asked)
    assert {_choice_first(q) for q in cat5.question_id} == {True, False}  # both orders occur


def test_question_text_context_and_choices():
    q = {"question_id": "x", "question": "When did  Mel paint?", "category": 2}
    assert question_text(q, benchmark("locomo")) == ("When did Mel paint? Use the dates of the conversations to answer "
                                          "with an approximate date.", None)
    assert question_text({**q, "category": 4}, benchmark("locomo")) == ("When did Mel paint?", None)
    assert question_text({**q, "category": 2}, benchmark("longmemeval"))[0] == "When did Mel paint?"
    text, key = question_text({**q, "category": 5, "adversarial_answer": "in June"}, benchmark("locomo"))
    assert set(key.values()) == {NOT_MENTIONED, "in June"} and text.endswith(f"(a) {key['a']} (b) {key['b']}.")
    assert resolve_choice(" B ", key) == key["b"] and resolve_choice("(a)", key) == key["a"]
    assert resolve_choice("I think she did not", key) == "I think she did not"
    assert resolve_choice("b", None) == "b"
    ex = [Excerpt(1, "2023-05-02", "B" * 600), Excerpt(2, "2023-05-01", "A" * 300), Excerpt(3, None, "C" * 900)]
    context, n = render_context(ex, max_chars=1600, order="date")
    assert n == 3 and context.index("A") < context.index("B") < context.index("C") and context.endswith("…")
    assert render_context(ex, max_chars=1200, order="rank")[1] == 2  # 276 chars left: the third is dropped
    assert render_context([], 100)[1] == 0
    assert verdict_type(benchmark("longmemeval"), {"question_id": "a_abs", "question_type": "multi-session"}) == UNANSWERABLE
    assert verdict_type(benchmark("locomo"), {"question_id": "a_abs", "question_type": "multi-hop"}) == "multi-hop"


def test_locomo_token_f1_by_hand():
    assert normalize_answer("The Cat, and a Dog!") == "cat dog"
    assert normalize_answer("Salt-and-pepper, 7 May 2023.") == "saltandpepper 7 may 2023"
    # "the cats are running" vs "a cat runs": stems cat/are/run vs cat/run -> P 2/3, R 1
    assert f1_score("The cats are running", "a cat runs") == pytest.approx(0.8)
    assert f1_score("generously", "Generous") == 1.0  # Porter: both stem to "gener"
    assert f1_score("", "anything") == 0.0 and f1_score("Paris", "London") == 0.0
    # multi-answer (category 1): mean over gold parts of the best match among predicted parts
    assert f1_multi("Paris, London", "London, Berlin") == pytest.approx(0.5)
    assert f1_multi("pottery and painting", "painting, pottery") == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert locomo_score(1, "Paris, London", "London, Berlin") == pytest.approx(0.5)
    assert locomo_score(3, "hiking", "hiking; she loves nature") == 1.0  # category 3: gold before ";"
    assert locomo_score(2, "7 May 2023", "7 May 2023") == 1.0
    assert locomo_score(4, 2022, 2022) == 1.0
    assert locomo_score(5, "Not mentioned in the conversation", "ignored") == 1.0
    assert locomo_score(5, "No information available.", None) == 1.0
    assert locomo_score(5, "She went to Paris", "Paris") == 0.0
    with pytest.raises(ValueError):
        locomo_score(6, "a", "b")
