"""Content-addressed session keys: opaque, gold-free ids shared by every question that holds the session."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Sequence


def content_key(date: str | None, events: Sequence[dict[str, Any]]) -> str:
    """Hash of the session's time and events: equal content gives an equal key, names play no part."""
    fields = ("kind", "role", "speaker", "text", "caption", "state", "action")
    payload = json.dumps([date, [[e.get(f) for f in fields] for e in events]], ensure_ascii=False)
    return "s" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


class SessionKeys:
    """Assigns keys; two different benchmark sessions with identical content get distinct keys."""

    def __init__(self) -> None:
        self._owner: dict[str, str] = {}
        self._by_name: dict[tuple[str, str], str] = {}

    def key(self, session_id: str, date: str | None, events: Sequence[dict[str, Any]]) -> tuple[str, bool]:
        """Return (key, is_new) for this benchmark session and content."""
        base = content_key(date, events)
        known = self._by_name.get((session_id, base))
        if known:
            return known, False
        key, n = base, 1
        while key in self._owner:
            n += 1
            key = f"{base}-{n}"
        self._owner[key] = session_id
        self._by_name[(session_id, base)] = key
        return key, True
