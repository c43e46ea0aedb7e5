"""LoCoMo-Plus's own answer scoring in QA mode, as its judge does it (evaluation_framework/task_eval/llm_as_judge.py of
xjtuleeyf/Locomo-Plus at 059f4e3): a `Judge` (`membench.benchmarks.record`) asked once per answered question.

- The prompt is upstream's template for the "Cognitive" category (`judge-prompt.txt`), which has no reference
  answer: the judge sees the evidence, the item's cue dialogue, and the answer. The evidence is written as upstream's
  data/unified_input.py writes it: one line per cue turn with text, ``<speaker>：<text>`` (a full-width colon, as
  upstream has it), the speakers being the conversation's own names. Upstream's call_llm puts its conversation
  preamble, filled with "A" and "B", before the stripped prompt (the judge calls pass no category), and sends it as
  one user message at temperature 0 with at most 512 tokens: so does membench.
- The reply is read by upstream's ``_parse_judge_response`` (`read_label`): a JSON-like object with ``label`` then
  ``reason``, found anywhere in the reply; else the reply as JSON; where either fails, the first of "correct",
  "wrong", "partial" that occurs in the lower-cased reply, in that order (so a reply saying "incorrect" counts as
  correct, an upstream quirk kept as it is). The label maps to upstream's score: correct 1, partial 0.5, wrong 0,
  anything else 0 (``qa/judge_score``); the answer is correct (``qa/accuracy``) when the score is 1.
- Where upstream scores a failed call as 0 (its client returns an error text, which reads as no label), membench
  records the question as failed (no score), and an empty reply is asked again rather than read as "(empty)".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from membench.benchmarks.prompt_files import read_prompt_file
from membench.benchmarks.record import JudgeCall, Judged, JudgeRun
from membench.errors import InputError

HERE = Path(__file__).parent
DATA_FILES = ("judge-prompt.txt",)  # upstream's Cognitive judge prompt and its call preamble, read by this module
METRIC = "qa/judge_score"
LABEL_SCORES = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}
PARAMS = {"temperature": 0.0, "max_tokens": 512}  # llm_as_judge.py's defaults
SPEAKERS = ("A", "B")  # what call_llm fills its preamble with when no names are passed
_LABELLED = re.compile(r"""\{[^{}]*"label"\s*:\s*["']([^"']+)["'][^{}]*"reason"\s*:\s*["']([^"']*)["']""", re.DOTALL)


def read_label(raw: str | None) -> tuple[str, str]:
    """(label, reason) of a judge reply, step for step as upstream's _parse_judge_response reads it."""
    raw = (raw or "").strip()
    try:
        found = _LABELLED.search(raw)
        if found:
            return found.group(1).strip(), (found.group(2) or "").strip()
        obj = json.loads(raw)
        return (obj.get("label") or "").strip(), (obj.get("reason") or "").strip()
    except Exception:  # noqa: BLE001 - upstream falls back on any failure (bad JSON, a non-object, a non-string)
        lowered = raw.lower()
        label = next((word for word in ("correct", "wrong", "partial") if word in lowered), "")
        return label, raw[:200]


def label_score(label: str) -> float:
    """Upstream's label_to_score: correct 1, partial 0.5, wrong 0; any other label 0."""
    return LABEL_SCORES.get((label or "").strip().lower(), 0.0)


def evidence_text(turns: list[tuple[str, str]]) -> str:
    """The cue dialogue as upstream's judge sees it: ``<speaker>：<text>`` per turn with text."""
    return "\n".join(f"{speaker}：{text.strip()}" for speaker, text in turns if text)


class CognitiveJudge:
    """LoCoMo-Plus's judge (module docstring)."""

    metrics = (METRIC,)
    tables = ("turns", "qrels")

    def __init__(self) -> None:
        self.prompt = read_prompt_file(HERE / DATA_FILES[0], "locomo-plus-judge", ("preamble", "cognitive"))
        self.name = f"locomo-plus-cognitive@{self.prompt.sha256[:8]}"

    def prompts(self) -> list[dict[str, str]]:
        return [self.prompt.describe()]

    def messages(self, evidence: str, answer: str) -> list[dict[str, str]]:
        """Upstream's judge request for one answer: the preamble, then the filled template stripped."""
        filled = self.prompt["cognitive"].format(gold="", pred=answer or "", evidence=evidence or "")
        return [{"role": "user", "content": self.prompt["preamble"].format(*SPEAKERS) + filled.strip()}]

    def prepare(self, tables: Mapping[str, pd.DataFrame], options: Mapping[str, Any]):
        if options:
            raise InputError("config", f"LoCoMo-Plus's judge takes no options, got {', '.join(sorted(options))}",
                             field="qa.judge_options")
        turns = tables["turns"]
        said = dict(zip(turns.item_id.astype(str), zip(turns.speaker, turns.text)))
        qrels = tables["qrels"]
        cues: dict[str, list[str]] = {}
        for qid, item in zip(qrels[qrels.granularity == "turn"].question_id, qrels[qrels.granularity == "turn"].item_id):
            cues.setdefault(str(qid), []).append(str(item))

        def judge(question: Mapping[str, Any], answer: str) -> JudgeRun:
            qid = str(question["question_id"])
            missing = [i for i in cues.get(qid, []) if i not in said]
            if missing or qid not in cues:
                raise InputError("qrels", f"question {qid}: its cue turns {missing or '(none)'} are not in the turns")
            return self._judge(evidence_text([(str(s), "" if pd.isna(t) else str(t)) for s, t in
                                              (said[i] for i in cues[qid])]), answer)

        return judge

    def _judge(self, evidence: str, answer: str) -> JudgeRun:
        (label, reason), = yield [JudgeCall(self.messages(evidence, answer), read_label, PARAMS,
                                            {"prompt": self.prompt.version})]
        score = label_score(label)
        return Judged({METRIC: score}, correct=score == 1.0, detail={"label": label, "reason": reason})

    def summary(self, qa: pd.DataFrame, questions: pd.DataFrame) -> dict[str, Any]:
        """Upstream's summary: the mean score over the judged answers, and how many got each label."""
        judged = qa[qa.judge_status == "ok"]
        labels = [json.loads(d)["label"] for d in judged.judge_detail]
        return {METRIC: float(judged[METRIC.split("/", 1)[1]].mean()) if len(judged) else None,
                "judged": int(len(judged)), "left_out": int(len(qa) - len(judged)),
                "labels": {k: labels.count(k) for k in sorted(set(labels))}}


JUDGE = CognitiveJudge()
