"""LoCoMo's dia_id lists as published: an observation names its source turns as a list whose items are sometimes
several ids joined by commas ("D1:3, D1:5"); read here once for the facts stage and for measuring attribution."""

from __future__ import annotations

from typing import Any


def split_dia_ids(raw: Any) -> tuple[list[str], int]:
    """The dia_ids of one observation and how many comma-joined strings were split."""
    items = raw if isinstance(raw, list) else [raw]
    out, split = [], 0
    for item in items:
        if not isinstance(item, str):
            continue
        parts = [p.strip() for p in item.split(",") if p.strip()]
        if len(parts) > 1:
            split += 1
        out += parts
    return out, split
