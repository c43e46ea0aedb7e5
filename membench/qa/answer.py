"""Answer mode: build each question's context from an adapter's top-K retrieved items and ask for an answer.

Context (upstream LongMemEval ``src/generation/run_generation.py`` is the model for it):

- Items are the run's top ``k`` at one granularity. A **turn** item is that turn (LongMemEval: expanded
  to its round -- the user turn plus the assistant reply that follows it, as upstream's ``flat-turn``
  does); a **session** item is all turns of the session. Texts come from turns.parquet, each excerpt
  headed by its conversation's date; a LoCoMo image share is shown as ``[shares image: <caption>]``.
- Excerpts are taken in rank order until ``max_context_chars`` is reached (the excerpt that overflows
  is cut if at least 500 characters remain, the rest are dropped; ``n_context`` counts those shown),
  then listed oldest first (upstream sorts retrieved sessions by date; ``order: rank`` keeps rank order).

Question text (upstream LoCoMo ``task_eval/evaluate_gpts.py``):

- category 2 (temporal): the question plus an instruction to answer with an approximate date from the
  conversation dates;
- category 5 (adversarial): the question plus ``Select the correct answer: (a) ... (b) ...`` with "Not
  mentioned in the conversation" and the adversarial answer, in an order fixed by the question id's hash
  (upstream draws it at random; a fixed order keeps the prompt, hence the cache key, stable). A reply
  that is just ``a``/``b`` or ``(a)``/``(b)`` is mapped to that option's text, as upstream does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from membench.benchmarks.record import Benchmark
from membench.dates import format_date
from membench.llm.prompts import Prompt

__all__ = ["Excerpt", "TurnIndex", "render_context", "question_text", "resolve_choice", "answer_messages",
           "NOT_MENTIONED", "TEMPORAL_HINT"]

NOT_MENTIONED = "Not mentioned in the conversation"
TEMPORAL_HINT = " Use the dates of the conversations to answer with an approximate date."
_MIN_CUT = 500


@dataclass(frozen=True)
class Excerpt:
    rank: int
    date: str | None
    text: str


def _turn_line(row: Mapping[str, Any]) -> str:
    speaker = row.get("speaker") or row.get("role") or "?"
    text = " ".join(str(row.get("text") or "").split())
    caption = row.get("caption")
    if caption is not None and not pd.isna(caption) and str(caption).strip():
        text += f" [shares image: {' '.join(str(caption).split())}]"
    return f"{speaker}: {text}"


class TurnIndex:
    """turns.parquet, looked up within one question's haystack (benchmark item ids repeat across
    haystacks: LoCoMo dia_ids restart in every conversation): turn item -> its row, session -> its rows."""

    def __init__(self, turns: pd.DataFrame, haystacks: pd.DataFrame):
        chat = turns[turns.kind == "turn"].sort_values(["session_key", "turn_index"], kind="stable")
        self.rows = chat.to_dict("records")
        self.by_key: dict[str, list[int]] = {}
        for i, row in enumerate(self.rows):
            self.by_key.setdefault(str(row["session_key"]), []).append(i)
        hay = haystacks.sort_values(["haystack_id", "position"], kind="stable")
        self.sessions = {str(h): [str(k) for k in g.session_key] for h, g in hay.groupby("haystack_id", sort=False)}
        self._maps: dict[str, tuple[dict[str, int], dict[str, list[int]]]] = {}

    def _lookup(self, haystack_id: str) -> tuple[dict[str, int], dict[str, list[int]]]:
        found = self._maps.get(haystack_id)
        if found is None:
            by_item: dict[str, int] = {}
            by_session: dict[str, list[int]] = {}
            for key in self.sessions.get(haystack_id, []):
                idx = self.by_key.get(key, [])
                for i in idx:
                    by_item.setdefault(str(self.rows[i]["item_id"]), i)
                if idx:
                    by_session.setdefault(str(self.rows[idx[0]]["session_id"]), idx)
            found = self._maps[haystack_id] = (by_item, by_session)
        return found

    def session_ids(self, haystack_id: str) -> list[str]:
        """The haystack's sessions (their benchmark ids) in haystack order: the whole history."""
        return list(self._lookup(str(haystack_id))[1])

    def session_of(self, haystack_id: str, item: str) -> str | None:
        """The id of the session holding turn ``item`` of the haystack, or None where it has no such turn."""
        i = self._lookup(str(haystack_id))[0].get(str(item))
        return None if i is None else str(self.rows[i]["session_id"])

    def excerpt(self, haystack_id: str, item: str, granularity: str, rank: int,
                expand_rounds: bool) -> Excerpt | None:
        by_item, by_session = self._lookup(str(haystack_id))
        if granularity == "session":
            idx = by_session.get(item)
            if not idx:
                return None
            first = self.rows[idx[0]]
            lines = [_turn_line(self.rows[i]) for i in idx]
            return Excerpt(rank, _date(first), f"[{format_date(_date(first))}]\n" + "\n".join(lines))
        i = by_item.get(item)
        if i is None:
            return None
        row = self.rows[i]
        lines = [_turn_line(row)]
        if expand_rounds and i + 1 < len(self.rows):
            nxt = self.rows[i + 1]
            if nxt["session_key"] == row["session_key"] and nxt.get("role") != row.get("role"):
                lines.append(_turn_line(nxt))
        return Excerpt(rank, _date(row), f"[{format_date(_date(row))}] " + "\n".join(lines))


def _date(row: Mapping[str, Any]) -> str | None:
    d = row.get("session_date")
    return None if d is None or pd.isna(d) else str(d)


def render_context(excerpts: Sequence[Excerpt], max_chars: int | None, order: str = "date") -> tuple[str, int]:
    """The context block and how many excerpts it shows (see the module docstring)."""
    chosen: list[Excerpt] = []
    used = 0
    for ex in sorted(excerpts, key=lambda e: e.rank):
        cost = len(ex.text) + 2
        if max_chars and used + cost > max_chars:
            room = max_chars - used - 2
            if room >= _MIN_CUT:
                chosen.append(Excerpt(ex.rank, ex.date, ex.text[: room - 1].rstrip() + "…"))
            break
        chosen.append(ex)
        used += cost
    if order == "date":
        chosen.sort(key=lambda e: (e.date is None, e.date or "", e.rank))
    elif order != "rank":
        raise ValueError(f"order must be 'date' or 'rank', got {order!r}")
    if not chosen:
        return "(no memory excerpts were retrieved)", 0
    return "\n\n".join(e.text for e in chosen), len(chosen)


def _choice_first(question_id: str) -> bool:
    """True when 'Not mentioned' is option (a) for this question (fixed by the id's hash)."""
    return hashlib.sha256(str(question_id).encode("utf-8")).digest()[0] % 2 == 0


def question_text(question: Mapping[str, Any], record: Benchmark, adversarial_choices: bool = True
                  ) -> tuple[str, dict[str, str] | None]:
    """The question as asked, and for a LoCoMo category-5 multiple choice the answer key {a: .., b: ..}."""
    text = " ".join(str(question["question"]).split())
    category = question.get("category")
    if not record.qa_rule("categories") or category is None or pd.isna(category):
        return text, None
    category = int(category)
    if category == 2:
        return text + TEMPORAL_HINT, None
    if category == 5 and adversarial_choices:
        distractor = question.get("adversarial_answer")
        if distractor is None or pd.isna(distractor):
            distractor = question.get("answer")
        if distractor is None or pd.isna(distractor):
            return text, None
        distractor = " ".join(str(distractor).split())
        key = ({"a": NOT_MENTIONED, "b": distractor} if _choice_first(question["question_id"])
               else {"a": distractor, "b": NOT_MENTIONED})
        return f"{text} Select the correct answer: (a) {key['a']} (b) {key['b']}.", key
    return text, None


def resolve_choice(prediction: str, key: Mapping[str, str] | None) -> str:
    """Map a bare option letter to its text, as upstream's ``get_cat_5_answer`` does."""
    if not key:
        return prediction
    p = prediction.strip().lower()
    if len(p) == 1:
        return key["a"] if "a" in p else key["b"]
    if len(p) == 3:
        return key["a"] if "(a)" in p else key["b"]
    return prediction


def answer_messages(prompt: Prompt, context: str, question: str, question_date: str | None) -> list[dict]:
    return prompt.messages(context=context, question=question,
                           question_date=format_date(question_date) if question_date else "unknown")
