"""Tiny Markdown helpers: tables with aligned numbers, escaped cells."""

from __future__ import annotations

from typing import Any, Sequence


def cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[int] = (1,)) -> str:
    """A GitHub-style table; the columns at the `numeric` positions are right-aligned."""
    align = ["---:" if i in numeric else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
