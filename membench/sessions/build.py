"""Build small gold-free sessions in code: the plugin validator's synthetic haystacks and tests use them."""

from __future__ import annotations

from typing import Sequence

from membench.sessions.view import Event, Session


def chat_session(sid: str, stamp: str | None, turns: Sequence[tuple[str, str]]) -> Session:
    """A chat session of (role, text) turns; event refs are `<sid>-1`, `<sid>-2`, ..."""
    events = tuple(Event(f"{sid}-{i}", "turn", role, text, stamp) for i, (role, text) in enumerate(turns, 1))
    return Session(sid, stamp, events)


def trajectory_session(sid: str, task: str, steps: Sequence[tuple[str, str]]) -> Session:
    """A procedural trajectory: a task event (`<sid>-0`) then (state, action) steps `<sid>-1`, ..."""
    events = [Event(f"{sid}-0", "task", "user", task)]
    events += [Event(f"{sid}-{i}", "step", "environment", f"{state} {action}", state=state, action=action)
               for i, (state, action) in enumerate(steps, 1)]
    return Session(sid, None, tuple(events))
