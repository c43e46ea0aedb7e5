"""Verdicts: is an answer correct? By the benchmark's own rules.

LongMemEval (upstream ``src/evaluation/evaluate_qa.py``, ``get_anscheck_prompt``) judges with a model and a
rule that depends on the question type; the rubrics (generic ones in ``membench/benchmarks/rubrics.py``, its own in
``membench/benchmarks/longmemeval/verdict.py``) restate those facts in this project's words:

- single-session-user / single-session-assistant / multi-session (and any other type): correct when the
  response contains the correct answer, is equivalent to it, or gives all the intermediate steps to it;
  a response with only a subset of the required information is not correct.
- temporal-reasoning: the same, and off-by-one errors in a number of days/weeks/months are not penalised.
- knowledge-update: correct when the response gives the updated answer, even if it also mentions earlier
  information.
- single-session-preference: GOLD is a rubric; correct when the response recalls and uses the user's
  personal information correctly, without having to cover every point of the rubric.
- abstention (question id ending ``_abs``): GOLD explains why the question cannot be answered; correct when
  the response identifies the question as unanswerable (says the information is incomplete or not
  available, or that related information is given but not the asked one).

LoCoMo (upstream ``task_eval/evaluation.py``) has no model judge; its score is token F1
(:mod:`membench.benchmarks.locomo.answer_f1`). membench adds a model verdict for categories 1-4 (the generic rule above,
against the ``answer`` field), and scores category 5 (adversarial) exactly as upstream does, without a
call: correct when the answer contains "no information available" or "not mentioned".

Versions: each rubric has an id ``<name>@<8 hex of its text's sha256>`` (:func:`rubric_version`; the rule
verdict is :data:`RULE_RUBRIC`). Every verdict request carries the prompt version, the rubric version and,
for a re-asked verdict, its sample number as cache-key tags (:func:`verdict_request`), so editing a rubric
or asking N samples makes new keys, and a rerun of the same ones pays nothing.

The verdict reply must be ``{"correct": true|false}``; anything else is malformed and never read as a
verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from membench.benchmarks.record import Benchmark
from membench.benchmarks.rubrics import GENERIC, UNANSWERABLE as UNANSWERABLE_RULE
from membench.io import sha256_text
from membench.llm.prompts import Prompt
from membench.llm.replies import json_object_parser, wants_json

__all__ = ["RULES", "RULE_RUBRIC", "UNANSWERABLE", "verdict_type", "rules_for", "rubric_version", "verdict_messages",
           "verdict_request", "verdict_parser", "verdict_by_rule", "gold_for", "uses_rule"]

UNANSWERABLE = "unanswerable"
RULE_RUBRIC = "locomo-category-5@upstream-rule"

RULES: dict[str, str] = {"default": GENERIC, UNANSWERABLE: UNANSWERABLE_RULE}  # every benchmark's; it adds its own


def _missing(value: Any) -> bool:
    return value is None or (not isinstance(value, str) and pd.isna(value))


def verdict_type(record: Benchmark, question: Mapping[str, Any]) -> str:
    """The TYPE shown to the judge: the question type, or ``unanswerable`` for LongMemEval abstention."""
    if record.qa_rule("abstention") and (bool(question.get("is_abstention"))
                                         or str(question["question_id"]).endswith("_abs")):
        return UNANSWERABLE
    qtype = question.get("question_type")
    return "unknown" if _missing(qtype) else str(qtype)


def _rubrics(record: Benchmark) -> Mapping[str, str]:
    return {**RULES, **(record.qa.rubrics if record.qa else {})}


def rules_for(record: Benchmark, vtype: str) -> str:
    rubrics = _rubrics(record)
    return rubrics.get(vtype, rubrics["default"])


def rubric_version(record: Benchmark, vtype: str) -> str:
    """The id of the rubric a verdict of this TYPE is judged by, e.g. ``unanswerable@1a2b3c4d``."""
    rubrics = _rubrics(record)
    name = vtype if vtype in rubrics else "default"
    return f"{name}@{sha256_text(rubrics[name])[:8]}"


def uses_rule(record: Benchmark, question: Mapping[str, Any]) -> bool:
    """True for questions decided by the benchmark's own rule without a model (LoCoMo category 5)."""
    return bool(record.qa and record.qa.verdict_by_rule) and verdict_by_rule(record, question, "") is not None


def gold_for(question: Mapping[str, Any]) -> str | None:
    """The reference the judge compares against (the ``answer`` field)."""
    answer = question.get("answer")
    return None if _missing(answer) else " ".join(str(answer).split())


def verdict_by_rule(record: Benchmark, question: Mapping[str, Any], answer: str) -> bool | None:
    """A verdict that needs no model (the benchmark's `Qa.verdict_by_rule`: LoCoMo category 5), else None."""
    rule = record.qa.verdict_by_rule if record.qa else None
    return rule(question, answer) if rule else None


def verdict_messages(prompt: Prompt, record: Benchmark, question: str, vtype: str, gold: str, answer: str) -> list[dict]:
    return prompt.messages(question=" ".join(str(question).split()), question_type=vtype, gold=gold,
                           answer=str(answer).strip(), rules=rules_for(record, vtype))


def verdict_request(prompt: Prompt, record: Benchmark, question: str, vtype: str, gold: str, answer: str,
                    sample: int = 0) -> dict:
    """One verdict request with its cache-key tags (prompt and rubric versions; sample number when > 0)."""
    return {"messages": verdict_messages(prompt, record, question, vtype, gold, answer),
            "tags": {"prompt": prompt.version, "rubric": rubric_version(record, vtype), "sample": sample or None}}


def verdict_parser():
    """``{"correct": bool}`` -> bool."""
    check = json_object_parser({"correct": bool})

    def parse(text: str) -> bool:
        return bool(check(text)["correct"])

    return wants_json(parse, check)
