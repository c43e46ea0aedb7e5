"""The date cues of a question ("last week", "on May 8") as date intervals, for the date-aware BM25 adapters.

Cues understood (case-insensitive): explicit dates ("2023/05/08", "2023-05-08", "5/8/2023" (m/d/y), "May 8",
"8th of May", "May 8, 2023"), months ("in May", "May 2023", "last May"), years ("in 2022"), and relative ones
("today", "yesterday", "the day before yesterday", "N days/weeks/months/years ago", "a few days ago",
"last/this week|weekend|month|year", "the past/last N days|weeks|months", "last Saturday"), resolved against a
reference date (:func:`reference_date`).
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "a couple of": 2,
                "few": 3, "a few": 3, "several": 3}

_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_NUM = r"(?P<n>\d+|" + "|".join(sorted((re.escape(w) for w in NUMBER_WORDS), key=len, reverse=True)) + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_WEEKDAY = r"(?P<weekday>" + "|".join(WEEKDAYS) + r")"

KNOWLEDGE_UPDATE_RE = re.compile(
    r"\b(current|currently|now|latest|still|most recent|most recently|these days|nowadays|anymore|any more"
    r"|at the moment|at present|presently)\b", re.IGNORECASE)

Interval = tuple[date, date]


@lru_cache(maxsize=1 << 16)
def parse_date(text: str | None) -> datetime | None:
    """A LongMemEval date ("2023/12/18 (Mon) 04:17") or an ISO 8601 timestamp; None when absent/unreadable.
    Remembered (a datetime is immutable): date-aware adapters read every document's stamp for every question."""
    if not text:
        return None
    m = re.match(r"\s*(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?:\D+(\d{1,2}):(\d{2})(?::(\d{2}))?)?", text)
    if m:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        hh, mm, ss = int(m.group(4) or 0), int(m.group(5) or 0), int(m.group(6) or 0)
        try:
            return datetime(y, mo, d, hh, mm, ss)
        except ValueError:
            return None
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return parsed.replace(tzinfo=None)


def _month_interval(year: int, month: int) -> Interval:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _is_month(question: str, m: re.Match) -> bool:
    """"may" and "march" count as months only when capitalised ("in May", not "this may be")."""
    word = m.group("month")
    return word not in ("may", "march", "mar") or question[m.start("month")].isupper()


def _count(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word]


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _resolve_year(ref: date | None, month: int, day: int = 1) -> int | None:
    """A date given without a year: the latest year that does not put it after the reference date."""
    if ref is None:
        return None
    candidate = _safe_date(ref.year, month, min(day, 28) if month == 2 else day)
    return ref.year if candidate is None or candidate <= ref else ref.year - 1


def date_windows(question: str, reference: date | None, slack_days: int = 1) -> list[Interval]:
    """Date intervals named by the question, each widened by `slack_days` on both sides.

    Relative cues need a reference date; explicit dates with a year do not. Cues are matched from the most
    specific pattern to the least, and a stretch of text used by one cue is not reused by another.
    """
    text = question.lower()
    used: list[tuple[int, int]] = []
    found: list[Interval] = []
    ref = reference

    def claim(m: re.Match) -> bool:
        start, end = m.span()
        if any(start < b and a < end for a, b in used):
            return False
        used.append((start, end))
        return True

    def add(interval: Interval | None) -> None:
        if interval is not None and interval[0] <= interval[1]:
            found.append(interval)

    def each(pattern: str) -> Iterable[re.Match]:
        for m in re.finditer(pattern, text):
            if "month" in m.groupdict() and not _is_month(question, m):
                continue
            if claim(m):
                yield m

    # explicit numeric dates
    for m in each(r"\b(\d{4})[/-](\d{1,2})[/-](\d{1,2})\b"):
        d = _safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        add((d, d) if d else None)
    for m in each(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b"):
        d = _safe_date(int(m.group(3)), int(m.group(1)), int(m.group(2)))
        add((d, d) if d else None)
    # month + day ("May 8", "May 8th, 2023") and day + month ("8 May", "8th of May 2023")
    for pattern in (r"\b" + _MONTH + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s*(?P<year>\d{4})\b)?",
                    r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b(?:,?\s*(?P<year>\d{4})\b)?"):
        for m in each(pattern):
            month, day = MONTHS[m.group("month")], int(m.group("day"))
            year = int(m.group("year")) if m.group("year") else _resolve_year(ref, month, day)
            d = _safe_date(year, month, day) if year else None
            add((d, d) if d else None)
    # relative day cues
    if ref is not None:
        for m in each(r"\b" + _MONTH + r"\s+(?:of\s+)?last\s+year\b"):
            add(_month_interval(ref.year - 1, MONTHS[m.group("month")]))
        for m in each(r"\bthe day before yesterday\b"):
            add((ref - timedelta(2), ref - timedelta(2)))
        for m in each(r"\byesterday\b"):
            add((ref - timedelta(1), ref - timedelta(1)))
        for m in each(r"\b(?:today|tonight|this morning|this afternoon|this evening)\b"):
            add((ref, ref))
        for m in each(r"\b" + _NUM + r"\s+" + _UNIT + r"\s+ago\b"):
            n, unit = _count(m.group("n")), m.group("unit")
            vague = not m.group("n").isdigit() and n > 1  # "a few", "a couple of", "several"
            if unit == "day":
                center, half = ref - timedelta(n), 1 if vague else 0
            elif unit == "week":
                center, half = ref - timedelta(7 * n), 3
            elif unit == "month":
                center, half = _add_months(ref, -n), 15
            else:
                center, half = _add_months(ref, -12 * n), 182
            add((center - timedelta(half), center + timedelta(half)))
        for m in each(r"\b(?:the\s+)?(?:past|last|previous)\s+" + _NUM + r"\s+" + _UNIT):
            n, unit = _count(m.group("n")), m.group("unit")
            if unit in ("day", "week"):
                start = ref - timedelta(n * (7 if unit == "week" else 1))
            else:
                start = _add_months(ref, -n * (12 if unit == "year" else 1))
            add((start, ref))
        for m in each(r"\b(?:in\s+)?the\s+(?:past|last)\s+" + _UNIT):
            unit = m.group("unit")
            start = {"day": ref - timedelta(1), "week": ref - timedelta(7),
                     "month": _add_months(ref, -1), "year": _add_months(ref, -12)}[unit]
            add((start, ref))
        for m in each(r"\b(last|this|past)\s+weekend\b"):
            days_back = (ref.weekday() - 5) % 7 or 7  # most recent Saturday strictly before the reference
            if m.group(1) == "this" and ref.weekday() >= 5:
                days_back = ref.weekday() - 5
            saturday = ref - timedelta(days_back)
            add((saturday, saturday + timedelta(1)))
        for m in each(r"\b(last|this|past)\s+(week|month|year)\b"):
            which, unit = m.groups()
            if unit == "week":
                add((ref - timedelta(10), ref - timedelta(4)) if which == "last" else (ref - timedelta(6), ref))
            elif unit == "month":
                if which == "last":
                    prev = _add_months(ref.replace(day=1), -1)
                    add(_month_interval(prev.year, prev.month))
                else:
                    add((ref.replace(day=1), ref) if which == "this" else (_add_months(ref, -1), ref))
            else:
                if which == "last":
                    add((date(ref.year - 1, 1, 1), date(ref.year - 1, 12, 31)))
                else:
                    add((date(ref.year, 1, 1), ref) if which == "this" else (_add_months(ref, -12), ref))
        for m in each(r"\b(?:last|this past|past|on)\s+" + _WEEKDAY + r"\b"):
            days_back = (ref.weekday() - WEEKDAYS[m.group("weekday")]) % 7 or 7
            day = ref - timedelta(days_back)
            add((day, day))
    # months and years
    for m in each(r"\b(?P<which>last|this)\s+" + _MONTH + r"\b"):
        if ref is None:
            continue
        month = MONTHS[m.group("month")]
        year = ref.year if month < ref.month or (m.group("which") == "this" and month <= ref.month) else ref.year - 1
        add(_month_interval(year, month))
    for m in each(r"\b" + _MONTH + r"\s+(?P<year>\d{4})\b"):
        add(_month_interval(int(m.group("year")), MONTHS[m.group("month")]))
    for m in each(r"\b(?:in|during|since|of|early|late|mid)\s+" + _MONTH + r"\b"):
        month = MONTHS[m.group("month")]
        year = _resolve_year(ref, month)
        if year is not None:
            add(_month_interval(year, month))
    for m in each(r"\b(?:in|during|of)\s+((?:19|20)\d\d)\b"):
        year = int(m.group(1))
        add((date(year, 1, 1), date(year, 12, 31)))
    slack = timedelta(days=slack_days)
    return [(a - slack, b + slack) for a, b in found]


def is_knowledge_update(question: str) -> bool:
    """True when the wording asks for the current state of something that may have changed."""
    return KNOWLEDGE_UPDATE_RE.search(question) is not None


def reference_date(question_date: str | None, timestamps: Iterable[str | None]) -> date | None:
    """What relative cues count from: the question's date, else the latest document timestamp, else None."""
    parsed = parse_date(question_date)
    if parsed is not None:
        return parsed.date()
    stamps = [t for t in (parse_date(s) for s in timestamps) if t is not None]
    return max(stamps).date() if stamps else None


def apply_windows(scores: np.ndarray, timestamps: Sequence[str | None], windows: Sequence[Interval],
                  boost: float, dampen: float) -> np.ndarray:
    """Multiply the scores of documents dated inside a window by `boost`, of dated ones outside every window by
    `dampen` (``timestamps[i]`` is document i's; undated documents keep their score).

    A negative score (BM25Okapi's idf floor can go below zero on tiny haystacks) is divided instead, so a
    boost always moves a document up and a dampening always moves it down."""
    if not windows:
        return scores
    out = np.array(scores, dtype=float)
    for i, timestamp in enumerate(timestamps):
        stamp = parse_date(timestamp)
        if stamp is None:
            continue
        day = stamp.date()
        factor = boost if any(a <= day <= b for a, b in windows) else dampen
        out[i] = out[i] * factor if out[i] >= 0 else out[i] / factor
    return out
