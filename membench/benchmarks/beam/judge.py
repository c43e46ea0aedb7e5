"""BEAM's own answer scoring in QA mode, as its evaluation does it (src/evaluation/ of mohammadtavakoli78/BEAM at
b2a3ee8): a `Judge` (`membench.benchmarks.record`) that the QA stage asks once per answered question.

Per question, for every item of its rubric (the parser's `rubrics` table), one call with upstream's judge prompt
(`judge-prompt.txt`): the item and the answer filled in by plain replacement, the literal ``<question>`` left as
upstream leaves it (``qa.judge_options.fill_question: true`` fills it with the question). The reply is read as
upstream reads it (`read_reply`): a reply starting with a code fence gives the JSON inside it, the text is tried as
JSON, then its first ``{...}`` or ``[...]`` (the shortest), and where that fails `json_repair` (the version upstream
pins) mends the text. A reply upstream cannot read (its run would stop with an exception: no JSON even after repair,
no ``score``, a score its conversion refuses) is a malformed reply: the client asks again, and the question fails if
no reply can be read; it is never given a score.

Per question (`rubric_scores`), as upstream computes it:

- every ability but event ordering: ``int(score)`` per item, summed, over the number of items; a 0.5 counts 0
  (``int(0.5)``), an upstream quirk kept as the upstream figure, ``qa/beam``. ``qa/beam_half`` is the same with the
  0.5 kept (``float``);
- event ordering: the reported figure is ``tau_norm`` from upstream's ``event_ordering_score`` with its LLM
  alignment (`align` and `ordering_score`): the answer split at every newline (blank lines included), each line
  compared, in order, with each rubric item not yet matched by one YES/NO equivalence call
  (`equivalence-prompt.txt`, a YES being any reply containing "yes") until one matches; matched lines become their
  item; then Kendall's tau-b between the two rank lists over the union of both, unmatched entries tied last,
  normalised to ``(tau + 1) / 2``. ``qa/beam`` = ``qa/beam_half`` = ``tau_norm`` for these questions. Upstream's
  evaluation also asks a fact-extraction call for every ordering answer and then discards its result
  (``system_list`` is overwritten by the answer's lines): membench does not ask it, so nothing is paid for it.
- ``qa/beam_rubric``: the rubric mean with 0.5 kept for every ability, event ordering included (upstream computes it
  for event ordering as ``llm_judge_score`` with ``float``, and does not report it).

Aggregate (`upstream_figures`, as src/evaluation/report_results.py averages): per chat, the mean over its questions
of each ability; per ability, the mean over chats. Upstream's report has no overall figure; membench's ``overall`` is
the mean of the ability figures (equal to the mean over chats of each chat's mean over abilities when every chat has
every ability). Undefined values (a tau of a single distinct event) stay NaN through the means, as upstream's sums
carry them; a question without a score (a failed call) is left out and counted.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from json_repair import repair_json

from membench.benchmarks.prompt_files import read_prompt_file
from membench.benchmarks.record import JudgeCall, Judged, JudgeRun
from membench.errors import InputError
from membench.io import sha256_text

HERE = Path(__file__).parent
DATA_FILES = ("judge-prompt.txt", "equivalence-prompt.txt")  # upstream's prompts, read by this module
ORDERING = "event_ordering"
METRIC = "qa/beam"  # upstream's reported figure
HALF = "qa/beam_half"  # the same with a 0.5 kept
RUBRIC = "qa/beam_rubric"  # the rubric mean with a 0.5 kept, every ability
METRICS = (METRIC, HALF, RUBRIC)
PARAMS = {"temperature": 0}  # upstream's judge: ChatOpenAI(temperature=0)
OPTIONS = {"fill_question": False}

_FENCED = re.compile(r"```(?:json)?\s*(\[.*\]|\{.*\})\s*```", re.DOTALL)
_FIRST = re.compile(r"(\{.*?\}|\[.*?\])", re.DOTALL)
_PAIR = re.compile(r"\{(first_paragraph|second_paragraph)\}")


def _json_as_upstream(text: str) -> Any:
    """Upstream's parse_json_response, step for step; raises ValueError where it raises."""
    text = text.strip()
    if text.startswith("```"):
        fenced = _FENCED.search(text)
        if fenced:
            text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    first = _FIRST.search(text)
    if first is None:
        raise ValueError("no JSON found in the reply")
    return json.loads(first.group(1))


def read_reply(text: str) -> Any:
    """A judge reply as upstream reads it: its JSON reading, else ``json.loads(repair_json(reply))``."""
    text = text.strip()
    try:
        return _json_as_upstream(text)
    except ValueError:
        return json.loads(repair_json(text))


def _item_score(text: str, ordering: bool) -> dict[str, Any]:
    obj = read_reply(text)
    try:
        raw = obj["score"]
        counted = float(raw) if ordering else int(raw)
        kept = float(raw)
    except (KeyError, TypeError, ValueError, IndexError, OverflowError) as err:
        raise ValueError(f"upstream reads no score from {json.dumps(obj)[:80]} ({type(err).__name__}: {err})") from None
    if math.isnan(kept):
        raise ValueError("the score is NaN")
    return {"score": raw, "counted": counted, "kept": kept}


def item_score(text: str) -> dict[str, Any]:
    """One rubric item's reply (every ability but event ordering): the score as given, ``int`` of it, ``float``."""
    return _item_score(text, ordering=False)


def ordering_item_score(text: str) -> dict[str, Any]:
    """One rubric item's reply for an event ordering, where upstream takes ``float`` of the score."""
    return _item_score(text, ordering=True)


def says_yes(text: str) -> bool:
    """An equivalence reply as upstream reads it: YES when "yes" occurs anywhere in it, in any case."""
    return "yes" in text.lower()


def ordering_score(reference: Sequence[str], system: Sequence[str]) -> dict[str, float]:
    """Upstream's event_ordering_score after its alignment: `system` is the answer's lines with each matched line
    replaced by its rubric item."""
    shared = set(reference) & set(system)
    tp = len(shared)
    fp = sum(1 for x in system if x not in reference)
    fn = sum(1 for x in reference if x not in system)
    precision = tp / (tp + fp) if tp + fp else 0
    recall = tp / (tp + fn) if tp + fn else 0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0
    union = list(dict.fromkeys([*reference, *system]))
    last = len(union) + 1

    def ranks(seq: Sequence[str]) -> list[int]:
        place: dict[str, int] = {}
        for n, x in enumerate(seq, start=1):
            place[x] = n  # a repeated entry keeps its last place
        return [place.get(u, last) for u in union]

    from scipy.stats import kendalltau  # here, not at the top: scipy.stats costs every job ~1 s to import

    tau = float(kendalltau(ranks(reference), ranks(system), variant="b", method="auto").statistic)
    tau_norm = (tau + 1) / 2  # NaN stays NaN, as upstream's `is not None` test lets it through
    return {"precision": precision, "recall": recall, "f1": f1, "tau_norm": tau_norm, "final_score": tau_norm * f1}


class BeamJudge:
    """BEAM's rubric judge (module docstring)."""

    metrics = METRICS
    tables = ("rubrics",)

    def __init__(self) -> None:
        self.judge_prompt = read_prompt_file(HERE / DATA_FILES[0], "beam-judge", ("prompt",))
        self.equivalence = read_prompt_file(HERE / DATA_FILES[1], "beam-equivalence", ("system", "user"))
        self.name = f"beam-rubric@{sha256_text(self.judge_prompt.sha256 + self.equivalence.sha256)[:8]}"

    def prompts(self) -> list[dict[str, str]]:
        return [self.judge_prompt.describe(), self.equivalence.describe()]

    def judge_messages(self, item: str, answer: str, question: str | None = None) -> list[dict[str, str]]:
        """Upstream's judge prompt for one rubric item: ``<rubric_item>`` then ``<llm_response>`` replaced (and
        ``<question>`` first, only when asked to), as one user message."""
        text = self.judge_prompt["prompt"]
        if question is not None:
            text = text.replace("<question>", question)
        return [{"role": "user", "content": text.replace("<rubric_item>", item).replace("<llm_response>", answer)}]

    def equivalence_messages(self, item: str, line: str) -> list[dict[str, str]]:
        """Upstream's equivalence question: the rubric item first, the answer's line second."""
        values = {"first_paragraph": item, "second_paragraph": line}
        return [{"role": "system", "content": self.equivalence["system"]},
                {"role": "user", "content": _PAIR.sub(lambda m: values[m.group(1)], self.equivalence["user"])}]

    def prepare(self, tables: Mapping[str, pd.DataFrame], options: Mapping[str, Any]):
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise InputError("config", f"BEAM's judge takes no option {', '.join(unknown)} (it has "
                                       f"{', '.join(OPTIONS)})", field="qa.judge_options")
        fill = bool({**OPTIONS, **options}["fill_question"])
        rubrics = tables["rubrics"].sort_values(["question_id", "position"], kind="stable")
        items = {qid: [str(t) for t in g.text] for qid, g in rubrics.groupby("question_id", sort=False)}

        def judge(question: Mapping[str, Any], answer: str) -> JudgeRun:
            return self._judge(question, answer, items.get(str(question["question_id"]), []), fill)

        return judge

    def _judge(self, question: Mapping[str, Any], answer: str, items: list[str], fill: bool) -> JudgeRun:
        if not items:
            raise InputError("rubrics", f"question {question['question_id']} has no rubric items to judge by")
        ordering = question["question_type"] == ORDERING
        tags = {"prompt": self.judge_prompt.version}
        asked = str(question["question"]) if fill else None
        replies = yield [JudgeCall(self.judge_messages(item, answer, asked),
                                   ordering_item_score if ordering else item_score, PARAMS, tags) for item in items]
        counted = sum(r["counted"] for r in replies) / len(items)
        kept = sum(r["kept"] for r in replies) / len(items)
        detail: dict[str, Any] = {"items": [r["score"] for r in replies], "llm_judge_score": counted}
        if not ordering:
            return Judged({METRIC: float(counted), HALF: kept, RUBRIC: kept}, detail=detail)
        system, matched = yield from self._align(items, answer.split("\n"))
        score = ordering_score(items, system)
        detail.update(score, lines=len(system), matched=matched)
        return Judged({METRIC: score["tau_norm"], HALF: score["tau_norm"], RUBRIC: kept}, detail=detail)

    def _align(self, items: list[str], lines: list[str]):
        """Upstream's align_with_llm: each line asked against each unmatched item, in order, until a YES."""
        used: set[int] = set()
        system: list[str] = []
        tags = {"prompt": self.equivalence.version}
        for line in lines:
            match = None
            for index, item in enumerate(items):
                if index in used:
                    continue
                same, = yield [JudgeCall(self.equivalence_messages(item, line), says_yes, PARAMS, tags)]
                if same:
                    match = index
                    break
            if match is None:
                system.append(line)
            else:
                system.append(items[match])
                used.add(match)
        return system, len(used)

    def summary(self, qa: pd.DataFrame, questions: pd.DataFrame) -> dict[str, Any]:
        return upstream_figures(qa, questions)


def upstream_figures(qa: pd.DataFrame, questions: pd.DataFrame) -> dict[str, Any]:
    """Per ability and overall, per metric, averaged as upstream's report_results does (module docstring): the QA
    table's metric columns, its questions' chats (``haystack_id``) and abilities (``question_type``)."""
    meta = questions.set_index("question_id")[["haystack_id", "question_type"]].rename(
        columns={"haystack_id": "chat", "question_type": "ability"})
    table = qa.drop(columns=["chat", "ability"], errors="ignore").merge(meta, left_on="question_id", right_index=True)
    judged = table[table.judge_status == "ok"]
    out: dict[str, Any] = {"questions": {a: int(n) for a, n in judged.groupby("ability").size().items()},
                           "left_out": int(len(table) - len(judged))}
    for metric in METRICS:
        column = metric.split("/", 1)[1]
        by_chat = judged.groupby(["ability", "chat"], sort=True)[column].agg(
            lambda v: v.sum(skipna=False) / len(v))
        figures = {a: float(v.sum(skipna=False) / len(v)) for a, v in by_chat.groupby(level=0)}
        figures["overall"] = float(sum(figures.values()) / len(figures)) if figures else math.nan
        out[metric] = figures
    return out


JUDGE = BeamJudge()
