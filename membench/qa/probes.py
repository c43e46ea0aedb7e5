"""Judge-calibration probes: answers of known correctness, built from the gold data alone (no model call).

For each probed question (see :func:`build_probes`):

======== ============================================================================ =========
probe    answer                                                                       correct?
======== ============================================================================ =========
gold     the gold answer as it is                                                     yes
paraphr. the gold reworded: a date written the other way round ("7 May 2023" <->       yes
         "May 7, 2023"), else a small number as a word ("3" -> "three"), else a list
         in reverse order, else the gold lower-cased after a lead-in ("As far as I
         recall, ...")
other    another question's gold answer: same conversation/haystack and type first,    no
         else same haystack, else same type (never one that contains the gold or is
         contained in it)
near     a near miss of the gold: the first year one earlier, else a month three       no
         later, else a weekday two later, else a number two higher (beyond the
         off-by-one the temporal rubric forgives); no probe when the gold has none
made_up  abstention / adversarial questions only: a confident made-up answer -- LoCoMo   no
         category 5's own adversarial answer, else another question's gold
======== ============================================================================ =========

Abstention (LongMemEval ``_abs``) and adversarial (LoCoMo category 5) questions get gold, paraphrase (a
decline worded differently) and made_up probes; a question whose gold an erratum withdrew gets none.
Everything is deterministic: the same data and settings give the same probes, hence the same cache keys.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from membench.qa.answer import NOT_MENTIONED
from membench.benchmarks.record import Benchmark
from membench.qa.verdict import UNANSWERABLE, gold_for, uses_rule, verdict_type

__all__ = ["Probe", "PROBE_KINDS", "SHOULD_ACCEPT", "build_probes", "paraphrase", "near_miss", "calibration_order"]

PROBE_KINDS = ("gold", "paraphrase", "other_gold", "near_miss", "made_up")
SHOULD_ACCEPT = {"gold": True, "paraphrase": True, "other_gold": False, "near_miss": False, "made_up": False}
DECLINE_PARAPHRASE = "Nothing in our past conversations says so, so I cannot tell."

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
_MONTH = "(" + "|".join(_MONTHS) + ")"
_DMY = re.compile(r"\b(\d{1,2}) " + _MONTH + r",? (\d{4})\b", re.IGNORECASE)
_MDY = re.compile(r"\b" + _MONTH + r" (\d{1,2}),? (\d{4})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(19|20)(\d{2})\b")
_MONTH_RE = re.compile(r"\b" + _MONTH + r"\b", re.IGNORECASE)
_DAY_RE = re.compile(r"\b(" + "|".join(_DAYS) + r")\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\d.,:])\b(\d+)\b(?![.,:]\d)")
_WORD_NUMBER = re.compile(r"\b(" + "|".join(_WORDS[:19]) + r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class Probe:
    question_id: str
    kind: str
    answer: str

    @property
    def should_accept(self) -> bool:
        return SHOULD_ACCEPT[self.kind]


def _cap(name: str, like: str) -> str:
    return name.lower() if like.islower() else name


def paraphrase(gold: str) -> str:
    """The gold reworded without changing its meaning (see the module docstring)."""
    m = _DMY.search(gold)
    if m:
        month = _MONTHS[[x.lower() for x in _MONTHS].index(m.group(2).lower())]
        return gold[:m.start()] + f"{month} {int(m.group(1))}, {m.group(3)}" + gold[m.end():]
    m = _MDY.search(gold)
    if m:
        month = _MONTHS[[x.lower() for x in _MONTHS].index(m.group(1).lower())]
        return gold[:m.start()] + f"{int(m.group(2))} {month} {m.group(3)}" + gold[m.end():]
    m = _NUMBER.search(gold)
    if m and int(m.group(1)) < len(_WORDS):
        return gold[:m.start()] + _WORDS[int(m.group(1))] + gold[m.end():]
    parts = [p.strip() for p in gold.rstrip(".").split(",") if p.strip()]
    if len(parts) >= 2:
        parts = parts[::-1]
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    text = gold.strip().rstrip(".")
    return f"As far as I recall, {text[:1].lower() + text[1:]}."


def near_miss(gold: str) -> str | None:
    """A wrong answer close to the gold (see the module docstring), or None when the gold has nothing to shift."""
    m = _YEAR.search(gold)
    if m:
        return gold[:m.start()] + str(int(m.group(0)) - 1) + gold[m.end():]
    m = _MONTH_RE.search(gold)
    if m:
        i = [x.lower() for x in _MONTHS].index(m.group(1).lower())
        return gold[:m.start()] + _cap(_MONTHS[(i + 3) % 12], m.group(1)) + gold[m.end():]
    m = _DAY_RE.search(gold)
    if m:
        i = [x.lower() for x in _DAYS].index(m.group(1).lower())
        return gold[:m.start()] + _cap(_DAYS[(i + 2) % 7], m.group(1)) + gold[m.end():]
    m = _NUMBER.search(gold)
    if m:
        return gold[:m.start()] + str(int(m.group(1)) + 2) + gold[m.end():]
    m = _WORD_NUMBER.search(gold)
    if m:
        i = [x.lower() for x in _WORDS].index(m.group(1).lower())
        return gold[:m.start()] + _cap(_WORDS[i + 2], m.group(1)) + gold[m.end():]
    return None


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", str(text).lower()).split())


def calibration_order(question_ids: Sequence[str]) -> list[str]:
    """Question ids in an order fixed by their sha256 (mixes types and conversations; stable across runs)."""
    return sorted(question_ids, key=lambda q: hashlib.sha256(str(q).encode("utf-8")).hexdigest())


def _is_abstention(record: Benchmark, q: Mapping[str, Any]) -> bool:
    return verdict_type(record, q) == UNANSWERABLE or uses_rule(record, q)


class _OtherGold:
    """Another question's gold: same haystack and type first, then same haystack, then same type."""

    def __init__(self, record: Benchmark, questions: pd.DataFrame):
        rows = [q for q in questions.sort_values("index", kind="stable").to_dict("records")
                if gold_for(q) is not None and not _is_abstention(record, q)]
        self.rows = rows

    def pick(self, q: Mapping[str, Any]) -> str | None:
        gold = _norm(gold_for(q) or "")
        tiers = ((True, True), (True, False), (False, True))
        for same_hay, same_type in tiers:
            pool = [r for r in self.rows if r["question_id"] != q["question_id"]
                    and (not same_hay or r["haystack_id"] == q["haystack_id"])
                    and (not same_type or r["question_type"] == q["question_type"])]
            after = [r for r in pool if r["index"] > q["index"]] + [r for r in pool if r["index"] <= q["index"]]
            for r in after:
                other = _norm(gold_for(r))
                if other and gold and other not in gold and gold not in other:
                    return gold_for(r)
        return None


def build_probes(record: Benchmark, questions: pd.DataFrame, chosen: pd.DataFrame, n: int | None) -> list[Probe]:
    """The probes of the first ``n`` of ``chosen`` in :func:`calibration_order` (``None`` = all of them);
    ``questions`` (the whole dataset) is where other questions' gold answers come from."""
    by_id = {q["question_id"]: q for q in chosen.to_dict("records")}
    order = calibration_order(list(by_id))
    if n is not None:
        order = order[: int(n)]
    others = _OtherGold(record, questions)
    probes: list[Probe] = []
    for qid in order:
        q = by_id[qid]
        if _is_abstention(record, q):
            gold = NOT_MENTIONED if uses_rule(record, q) else gold_for(q)
            made_up = q.get("adversarial_answer")
            if made_up is None or pd.isna(made_up):
                made_up = others.pick({**q, "answer": gold or ""})
            probes += [Probe(qid, "gold", gold or NOT_MENTIONED), Probe(qid, "paraphrase", DECLINE_PARAPHRASE)]
            if made_up:
                probes.append(Probe(qid, "made_up", " ".join(str(made_up).split())))
            continue
        gold = gold_for(q)
        if gold is None:  # withdrawn by an erratum, or no gold at all
            continue
        probes += [Probe(qid, "gold", gold), Probe(qid, "paraphrase", paraphrase(gold))]
        other = others.pick(q)
        if other is not None:
            probes.append(Probe(qid, "other_gold", other))
        near = near_miss(gold)
        if near is not None and _norm(near) != _norm(gold):
            probes.append(Probe(qid, "near_miss", near))
    return probes
