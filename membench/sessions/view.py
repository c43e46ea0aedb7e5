"""The gold-free view an adapter ranks over: sessions of events and a query, addressed by opaque ids.

Nothing here carries an evidence flag, answer text or a benchmark id that could encode gold; the scorer
maps opaque ids back to the benchmark's own names after ranking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Event:
    """One record of a session log: a chat turn, a task statement or a trajectory step."""

    ref: str  # opaque item id of this event, unique within the dataset
    kind: str  # "turn" | "task" | "step"
    role: str  # "user" | "assistant" | a speaker name | "environment"
    text: str
    timestamp: str | None = None  # ISO 8601 or None when the benchmark gives no time
    speaker: str | None = None
    state: str | None = None  # procedural steps: the observation before the action
    action: str | None = None  # procedural steps: the action taken
    caption: str | None = None  # LoCoMo: BLIP caption of a shared image
    about: tuple[str, ...] = ()  # fact records: refs of the turns the fact was drawn from
    source: str | None = None  # fact records: where the fact came from (a model, or the dataset)
    unit: str | None = None  # the benchmark's own retrieval unit for this turn, when it differs (LoCoMo upstream)


@dataclass(frozen=True)
class Session:
    """A distinct session (or trajectory): an opaque content-addressed id, its time and its events."""

    session_id: str
    timestamp: str | None
    events: tuple[Event, ...]


@dataclass(frozen=True)
class Query:
    """A question as an adapter sees it: opaque key, text, date, and metadata only when declared."""

    key: str
    text: str
    date: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Document:
    """A rankable unit built from the logs at one granularity (turn, session or trajectory)."""

    item_id: str  # opaque
    text: str
    session_id: str
    timestamp: str | None
    position: int  # order in the haystack: the documented tie-break (earlier position ranks first)


@dataclass(frozen=True)
class Haystack:
    """The sessions a question may search, in benchmark order, plus the rule that makes documents."""

    sessions: tuple[Session, ...]
    user_turns_only: bool = False  # LongMemEval's protocol indexes user turns only
    with_facts: bool = False  # "value + facts" keys: fact records are appended to the documents they are about
    _built: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def documents(self, granularity: str) -> list[Document]:
        """Documents at `granularity`: "turn" (one per retrievable turn), "session" or "trajectory". Built once
        per haystack and granularity (a LoCoMo conversation serves ~200 questions); each call gets its own list."""
        if granularity not in self._built:
            self._built[granularity] = tuple(self._build(granularity))
        return list(self._built[granularity])

    def _build(self, granularity: str) -> list[Document]:
        docs: list[Document] = []
        if granularity == "turn":
            for session in self.sessions:
                facts = self._facts_by_turn(session)
                for event in session.events:
                    if event.kind != "turn" or (self.user_turns_only and event.role != "user"):
                        continue
                    text = " ".join([unit_text(event), *facts.get(event.ref, ())])
                    docs.append(Document(event.ref, text, session.session_id, event.timestamp or session.timestamp,
                                         len(docs)))
        elif granularity in ("session", "trajectory"):
            for session in self.sessions:
                if granularity == "trajectory":
                    parts = [e.text for e in session.events if e.kind in ("task", "step")]
                else:
                    parts = [unit_text(e) for e in session.events
                             if e.kind == "turn" and (not self.user_turns_only or e.role == "user")]
                if self.with_facts:
                    parts += [e.text for e in session.events if e.kind == "fact"]
                docs.append(Document(session.session_id, " ".join(parts), session.session_id,
                                     session.timestamp, len(docs)))
        else:
            raise ValueError(f"unknown granularity {granularity!r}")
        return docs

    def _facts_by_turn(self, session: Session) -> dict[str, list[str]]:
        if not self.with_facts:
            return {}
        facts: dict[str, list[str]] = {}
        for event in session.events:
            if event.kind == "fact":
                for ref in event.about:
                    facts.setdefault(ref, []).append(event.text)
        return facts


def turn_text(event: Event) -> str:
    """A turn's indexable text: its words plus the caption of an image it shares (LoCoMo)."""
    if event.caption:
        return f"{event.text} [shares image: {event.caption}]"
    return event.text


def unit_text(event: Event) -> str:
    """What a document holds for a turn: the benchmark's own retrieval unit when ingest wrote one (LoCoMo:
    date, speaker, text and caption, `datasets.<name>.units: upstream`), else the plain `turn_text`."""
    return event.unit if event.unit is not None else turn_text(event)
