"""LongMemEval's date spelling ('2023/12/18 (Mon) 04:17') to ISO 8601 and back (its retrieval log writes its own)."""

from __future__ import annotations

from datetime import datetime


def longmemeval_date(text: str) -> str:
    """'2023/12/18 (Mon) 04:17' -> '2023-12-18T04:17:00' (the weekday is redundant and dropped)."""
    parts = text.split()
    if len(parts) != 3 or not (parts[1].startswith("(") and parts[1].endswith(")")):
        raise ValueError(f"expected 'YYYY/MM/DD (Day) HH:MM', got {text!r}")
    return datetime.strptime(f"{parts[0]} {parts[2]}", "%Y/%m/%d %H:%M").isoformat()


def upstream_date(iso: str | None) -> str | None:
    """'2023-12-18T04:17:00' -> '2023/12/18 (Mon) 04:17', LongMemEval's own format (inverse of
    :func:`longmemeval_date`)."""
    return None if iso is None else datetime.fromisoformat(iso).strftime("%Y/%m/%d (%a) %H:%M")
