"""Dataset kinds by name: the parser and the document rule each benchmark's protocol uses."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from membench.datasets import locomo, longmemeval, procedural
from membench.datasets.tables import ParsedDataset
from membench.errors import InputError

PARSERS: dict[str, Callable[[Path], ParsedDataset]] = {
    longmemeval.KIND: longmemeval.parse,
    locomo.KIND: locomo.parse,
    procedural.KIND: procedural.parse,
}

# The granularities a dataset is ranked and scored at.
GRANULARITIES = {longmemeval.KIND: ("session", "turn"), locomo.KIND: ("turn",), procedural.KIND: ("trajectory",)}

# The benchmark's own retrieval unit for a turn, (session_date, speaker, text, caption) -> indexed text, where
# it differs from membench's plain text (`datasets.<name>.units: upstream`, the default).
UNIT_FORMATS: dict[str, Callable[[str | None, str | None, str, str | None], str]] = {
    locomo.KIND: locomo.retrieval_unit,
}

# LongMemEval's retrieval protocol indexes user turns only.
USER_TURNS_ONLY = {longmemeval.KIND: True, locomo.KIND: False, procedural.KIND: False}


def parse_dataset(kind: str, source: Path) -> ParsedDataset:
    if kind not in PARSERS:
        raise InputError(source, f"unknown dataset kind {kind!r}; known: {', '.join(sorted(PARSERS))}")
    if not Path(source).exists():
        raise InputError(source, "dataset source not found")
    return PARSERS[kind](Path(source))
