"""A session or question date as the model prompts show it (facts, answers, QA): one spelling for every benchmark."""

from __future__ import annotations

from datetime import datetime


def format_date(timestamp: str | None) -> str:
    """``2023-05-08T13:56:00`` -> ``2023-05-08 (Mon) 13:56`` (how the fact, answer and QA prompts show a session
    or question date); other text is returned as it is."""
    if not timestamp:
        return "unknown"
    try:
        dt = datetime.fromisoformat(str(timestamp))
    except ValueError:
        return str(timestamp)
    text = f"{dt:%Y-%m-%d} ({dt:%a})"
    if (dt.hour, dt.minute, dt.second) != (0, 0, 0):
        text += f" {dt:%H:%M}"
    return text
