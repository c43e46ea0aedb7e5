"""Atomic facts from session logs, one model call per distinct session.

The prompt shows the session's date and its turns numbered ``[1] <speaker>: <text>``; the model replies
``{"facts": [{"fact": str, "turns": [int]}]}``. Turn numbers are mapped back to the turns' event refs
(``about``), so a fact is appended to the documents of the turns it was drawn from (``Haystack.with_facts``).

Validation (:func:`facts_parser`): the reply must be a JSON object with a ``facts`` list whose items are
``{"fact": non-empty str, "turns": [int, ...]}`` (``turns`` may be missing or a single int; a bare string
item is a fact without turns). Anything else is a malformed reply: the client asks again with the reason,
and if that fails too the session gets **no** facts and is counted as a failure -- a fact is never made up
from a reply that did not have the asked shape. Turn numbers that name no turn of the session are dropped
(counted in the manifest); the fact itself is kept.

Fact log format (``<facts_dir>/<session_key>.jsonl``, read by ``SessionStore(..., facts_dir=...)``)::

    {"ref": "<session_key>_f<n>", "kind": "fact", "role": "memory", "text": str,
     "timestamp": <the session's timestamp>, "about": [<turn refs>], "source": "llm:<model>" | ...}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from membench.dates import format_date
from membench.io import atomic_path
from membench.llm.prompts import Prompt
from membench.llm.replies import MalformedReply, json_object_parser, wants_json
from membench.sessions.reader import read_events
from membench.sessions.view import Event, turn_text

__all__ = ["SessionText", "session_keys", "load_session", "render_session", "facts_parser", "fact_records",
           "write_fact_log"]

_DIGITS = re.compile(r"^\s*\d+\s*$")


@dataclass(frozen=True)
class SessionText:
    """A session as the facts prompt shows it, and the map from shown turn number to event ref."""

    key: str
    timestamp: str | None
    turns: str  # "[1] speaker: text" lines
    numbering: Mapping[int, str]  # shown number -> event ref
    n_turns: int


def session_keys(sessions_dir: Path) -> list[str]:
    """Every distinct session of a dataset (its ``<sessions_dir>/<key>/events.jsonl`` logs), sorted."""
    return sorted(p.parent.name for p in Path(sessions_dir).glob("*/events.jsonl"))


def load_session(sessions_dir: Path, key: str) -> list[Event]:
    return read_events(Path(sessions_dir) / key / "events.jsonl")


def _clip(text: str, limit: int | None) -> str:
    text = text.strip()
    if limit and len(text) > limit:
        return text[: max(0, limit - 1)].rstrip() + "…"
    return text


def render_session(key: str, events: Sequence[Event], max_turn_chars: int | None = 2000) -> SessionText:
    """Number the session's turns from 1 (in log order) and render them for the facts prompt.

    Only ``turn`` events are shown (fact records or trajectory steps are not). A turn longer than
    ``max_turn_chars`` is cut (ending in "…"): long assistant answers would otherwise dominate the prompt.
    """
    lines, numbering = [], {}
    timestamp = next((e.timestamp for e in events if e.timestamp), None)
    for event in events:
        if event.kind != "turn":
            continue
        n = len(numbering) + 1
        numbering[n] = event.ref
        speaker = event.speaker or event.role
        lines.append(f"[{n}] {speaker}: {_clip(turn_text(event), max_turn_chars)}")
    return SessionText(key, timestamp, "\n".join(lines), numbering, len(numbering))


def facts_request(prompt: Prompt, session: SessionText) -> list[dict[str, str]]:
    return prompt.messages(date=format_date(session.timestamp), turns=session.turns)


def _as_turns(value: Any, index: int) -> list[int]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out = []
    for t in items:
        if isinstance(t, bool):
            raise MalformedReply(f"facts[{index}].turns must hold turn numbers, got {t!r}")
        if isinstance(t, int):
            out.append(t)
        elif isinstance(t, float) and t.is_integer():
            out.append(int(t))
        elif isinstance(t, str) and _DIGITS.match(t):
            out.append(int(t))
        else:
            raise MalformedReply(f"facts[{index}].turns must hold turn numbers, got {t!r:.40}")
    return out


def _check_facts(obj: dict) -> None:
    facts = obj["facts"]
    for i, item in enumerate(facts):
        if isinstance(item, str):
            if not item.strip():
                raise MalformedReply(f"facts[{i}] is an empty string")
            continue
        if not isinstance(item, dict):
            raise MalformedReply(f"facts[{i}] must be an object {{\"fact\": str, \"turns\": [int]}}, "
                                 f"got {type(item).__name__}")
        text = item.get("fact")
        if not isinstance(text, str) or not text.strip():
            raise MalformedReply(f"facts[{i}] needs a non-empty string 'fact'")
        _as_turns(item.get("turns"), i)


FACTS_SCHEMA = {"type": "object", "required": ["facts"], "properties": {"facts": {"type": "array", "items": {
    "type": "object", "required": ["fact", "turns"],
    "properties": {"fact": {"type": "string"}, "turns": {"type": "array", "items": {"type": "integer"}}}}}}}


def facts_parser():
    """The ``parse`` callable for fact replies: returns ``[(fact text, [turn numbers]), ...]``."""
    check = json_object_parser({"facts": list}, check=_check_facts, schema=FACTS_SCHEMA)

    def parse(text: str) -> list[tuple[str, list[int]]]:
        obj = check(text)
        out = []
        for i, item in enumerate(obj["facts"]):
            if isinstance(item, str):
                out.append((" ".join(item.split()), []))
            else:
                out.append((" ".join(item["fact"].split()), _as_turns(item.get("turns"), i)))
        return out

    return wants_json(parse, check)


def fact_records(session: SessionText, facts: Iterable[tuple[str, Sequence[int]]], source: str,
                 speaker: str | None = None) -> tuple[list[dict], int]:
    """Fact events for a session's parsed facts; returns (records, turn numbers that named no turn)."""
    records, dropped = [], 0
    for text, turns in facts:
        about: list[str] = []
        for n in turns:
            ref = session.numbering.get(int(n))
            if ref is None:
                dropped += 1
            elif ref not in about:
                about.append(ref)
        record = {"ref": f"{session.key}_f{len(records) + 1}", "kind": "fact", "role": "memory", "text": text,
                  "timestamp": session.timestamp, "about": about, "source": source}
        if speaker:
            record["speaker"] = speaker
        records.append(record)
    return records, dropped


def write_fact_log(path: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Write one fact log (JSON lines, ``None`` fields left out); returns the number of records."""
    n = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps({k: v for k, v in rec.items() if v is not None}, ensure_ascii=False) + "\n")
            n += 1
    return n
