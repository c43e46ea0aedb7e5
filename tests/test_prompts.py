"""Prompt files: package defaults, config overrides, placeholder checks, and the test server's protocol."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from membench.errors import InputError
from membench.llm.prompts import PROMPTS, load_prompt, parse_prompt
from openai_server import default_responder, prompt_input, prompt_task

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_package_prompt_has_marker_input_and_placeholders(name):
    prompt = load_prompt(name)
    assert prompt.source == f"package:{name}.txt"
    assert (ROOT / "membench" / "prompts" / f"{name}.txt").is_file()
    assert resources.files("membench").joinpath("prompts", f"{name}.txt").is_file()
    required, optional = PROMPTS[name]
    assert required <= prompt.placeholders <= required | optional
    values = {p: f"<{p}>" for p in prompt.placeholders}
    msgs = prompt.messages(**values)
    assert [m["role"] for m in msgs] == ["system", "user"]
    body = {"messages": msgs}
    assert prompt_task(body) == name  # the TASK marker the test server dispatches on
    user = msgs[1]["content"]
    assert "INPUT:" in user and "{{" not in user and "{{" not in msgs[0]["content"]
    # everything the stage fills in is in the INPUT section, after the instructions
    tail = prompt_input(body)
    for p in required:
        assert f"<{p}>" in tail
    assert len(prompt.sha256) == 64


def test_fill_is_single_pass_and_missing_values_fail():
    prompt = load_prompt("grade")
    msgs = prompt.messages(query="{{trajectory}}", trajectory="T")
    assert "Query task: {{trajectory}}" in msgs[1]["content"]
    with pytest.raises(KeyError, match="trajectory"):
        prompt.messages(query="q")


def test_config_override_relative_to_base_dir(tmp_path):
    text = "[[user]]\nTASK: verdict\nJudge it.\nINPUT:\nQ={{question}} G={{gold}} A={{answer}}\n"
    (tmp_path / "mine.txt").write_text(text)
    cfg = {"llm": {"prompts": {"verdict": "mine.txt"}}}
    prompt = load_prompt("verdict", cfg, base_dir=tmp_path)
    assert prompt.source == str(tmp_path / "mine.txt") and prompt.system is None
    assert prompt.messages(question="q", gold="g", answer="a") == [
        {"role": "user", "content": "TASK: verdict\nJudge it.\nINPUT:\nQ=q G=g A=a\n"}]
    # the section form of the whole config and the llm section alone both work
    assert load_prompt("verdict", cfg["llm"], base_dir=tmp_path).sha256 == prompt.sha256
    with pytest.raises(InputError, match="prompt file not found"):
        load_prompt("verdict", {"llm": {"prompts": {"verdict": "nope.txt"}}}, base_dir=tmp_path)


def test_bad_prompt_files_are_rejected(caplog):
    with pytest.raises(InputError, match=r"lacks the placeholder\(s\) \{\{trajectory\}\}"):
        parse_prompt("TASK: grade\nINPUT: {{query}}", "grade")
    with pytest.raises(InputError, match=r"unknown placeholder\(s\) \{\{quer\}\}"):
        parse_prompt("TASK: grade\nINPUT: {{quer}} {{query}} {{trajectory}}", "grade")
    with pytest.raises(InputError, match="two \\[\\[user\\]\\] sections"):
        parse_prompt("[[user]]\na {{turns}}\n[[user]]\nb", "facts")
    with pytest.raises(InputError, match="no user message"):
        parse_prompt("[[system]]\nhello {{turns}}\n", "facts")
    with pytest.raises(InputError, match="unknown prompt"):
        parse_prompt("x", "summarise")
    caplog.set_level("WARNING")
    parse_prompt("Facts please: {{turns}}", "facts")  # fine for a real model, but the test server needs markers
    assert "no 'TASK: facts' line" in caplog.text


def test_fake_responder_speaks_the_prompts():
    facts = load_prompt("facts").messages(
        date="2023-05-08 (Mon)", turns="[1] user: I moved to Oslo. I adopted a cat!\n[2] assistant: Nice.\nGreat news.")
    assert json.loads(default_responder({"messages": facts})) == {"facts": [
        {"fact": "I moved to Oslo.", "turns": [1]}, {"fact": "I adopted a cat!", "turns": [1]},
        {"fact": "Nice.", "turns": [2]}, {"fact": "Great news.", "turns": [2]}]}
    verdict = load_prompt("verdict")
    yes = verdict.messages(question="q", question_type="unanswerable", gold="never said", rules="r",
                           answer="That is not mentioned in our chats.")
    no = verdict.messages(question="q", question_type="unanswerable", gold="never said", rules="r", answer="Oslo")
    hit = verdict.messages(question="q", question_type="multi-session", gold="Oslo", rules="r",
                           answer="It was\nOSLO, in Norway.")
    assert json.loads(default_responder({"messages": yes})) == {"correct": True}
    assert json.loads(default_responder({"messages": no})) == {"correct": False}
    assert json.loads(default_responder({"messages": hit})) == {"correct": True}
    grade = json.loads(default_responder({"messages": load_prompt("grade").messages(query="q", trajectory="t")}))
    assert set(grade) == {"score", "reason"} and 0 <= grade["score"] <= 10
