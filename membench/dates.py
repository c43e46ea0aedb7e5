"""Benchmark date strings to ISO 8601, so logs and adapters share one time format."""

from __future__ import annotations

from datetime import datetime


def longmemeval_date(text: str) -> str:
    """'2023/12/18 (Mon) 04:17' -> '2023-12-18T04:17:00' (the weekday is redundant and dropped)."""
    parts = text.split()
    if len(parts) != 3 or not (parts[1].startswith("(") and parts[1].endswith(")")):
        raise ValueError(f"expected 'YYYY/MM/DD (Day) HH:MM', got {text!r}")
    return datetime.strptime(f"{parts[0]} {parts[2]}", "%Y/%m/%d %H:%M").isoformat()


def locomo_date(text: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00'."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        raise ValueError(f"expected 'H:MM am on D Month, YYYY', got {text!r}") from None
