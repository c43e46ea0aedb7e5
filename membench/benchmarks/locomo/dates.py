"""LoCoMo's date spelling ('1:56 pm on 8 May, 2023') to ISO 8601 and back (its retrieval units quote it)."""

from __future__ import annotations

from datetime import datetime

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def locomo_date_text(iso: str) -> str:
    """'2023-05-08T13:56:00' -> '1:56 pm on 8 May, 2023': LoCoMo's own spelling of a session time (the inverse
    of `locomo_date` for every date in locomo10.json), used where its retrieval units quote the date."""
    t = datetime.fromisoformat(iso)
    return f"{(t.hour - 1) % 12 + 1}:{t.minute:02d} {'am' if t.hour < 12 else 'pm'} on {t.day} {_MONTHS[t.month - 1]}, {t.year}"


def locomo_date(text: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00'."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        raise ValueError(f"expected 'H:MM am on D Month, YYYY', got {text!r}") from None
