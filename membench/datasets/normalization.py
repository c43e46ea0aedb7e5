"""A visible record of every repair or drop made while parsing (never a silent fix)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Normalization:
    code: str
    action: str  # "repaired" | "dropped" | "kept" | "flagged"
    description: str
    count: int = 0
    examples: list[Any] = field(default_factory=list)


class NormalizationLog:
    """Counts repairs by code and keeps the first few examples of each."""

    max_examples = 3

    def __init__(self) -> None:
        self._entries: dict[str, Normalization] = {}

    def note(self, code: str, action: str, description: str, example: Any, count: int = 1) -> None:
        entry = self._entries.setdefault(code, Normalization(code, action, description))
        entry.count += count
        if len(entry.examples) < self.max_examples:
            entry.examples.append(example)

    def count(self, code: str) -> int:
        entry = self._entries.get(code)
        return entry.count if entry else 0

    def as_list(self) -> list[dict[str, Any]]:
        return [vars(e).copy() for e in sorted(self._entries.values(), key=lambda e: e.code)]
