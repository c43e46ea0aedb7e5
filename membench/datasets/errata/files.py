"""Reading an errata file: the checks every kind of erratum shares (an object with an `errata` list, each entry
with its fields, a unique id and public sources), so a bad file is refused naming the file and the entry."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from membench.errors import InputError



@dataclass(frozen=True)
class Entry:
    """What every erratum names: the question it is about, why, and where it was reported."""

    id: str
    question_id: str  # as membench names it (LoCoMo: `<sample_id>_q<0-based qa index>`)
    question: str  # the question text as recorded: the erratum applies only while the file reads so
    reason: str
    sources: tuple[str, ...]


def entries(path: Path, fields: tuple[str, ...],
            setting: str) -> Iterator[tuple[str, Mapping[str, Any], tuple[str, ...]]]:
    """(record name, entry, its sources) for each entry of the file's `errata` list, after the shared checks:
    every field in ``fields`` present and non-empty, every source a public https:// address, ids unique.
    ``setting`` is the config key that names the file, for the error when it is missing."""
    if not path.is_file():
        raise InputError(path, "errata file not found", field=setting)
    try:
        listed = json.loads(path.read_text(encoding="utf-8")).get("errata")
    except (ValueError, AttributeError) as err:
        raise InputError(path, f"not a JSON object with an 'errata' list ({err})") from None
    if not isinstance(listed, list):
        raise InputError(path, "'errata' must be a list", field="errata")
    seen: set[str] = set()
    for i, entry in enumerate(listed):
        rec = f"errata[{i}]"
        if not isinstance(entry, Mapping):
            raise InputError(path, "must be an object", rec)
        missing = [f for f in fields if not entry.get(f) and entry.get(f) != 0]
        if missing:
            raise InputError(path, f"missing {', '.join(missing)}", rec)
        sources = entry["sources"] if isinstance(entry["sources"], list) else [entry["sources"]]
        if not all(str(s).startswith("https://") for s in sources):
            raise InputError(path, "every source must be a public https:// address", rec, "sources")
        if entry["id"] in seen:
            raise InputError(path, f"duplicate id {entry['id']!r}", rec, "id")
        seen.add(entry["id"])
        yield rec, entry, tuple(map(str, sources))
