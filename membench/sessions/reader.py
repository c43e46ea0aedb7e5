"""Read a question's haystack back from the session logs: the only way adapters see the past."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Iterator, Sequence

import pandas as pd

from membench.datasets.tables import files_in, needed
from membench.errors import InputError
from membench.sessions.view import Event, Haystack, Query, Session

# What the ingest stage writes for a dataset (key -> path under its folder): the gold-free view adapters see,
# and the scorer-side maps from opaque ids back to the benchmark's own.
STORE_FILES = {"sessions": "sessions", "queries": "view/queries.parquet", "haystacks": "view/haystacks.parquet",
               "item_map": "maps/item_map.parquet", "query_map": "maps/query_map.parquet"}


@dataclass(frozen=True)
class StoreFiles:
    """Where one dataset's ingest outputs are: the gold-free view every ranker reads (session logs, queries,
    haystacks) and the scorer-side id maps. Built once per job (`StoreFiles.of`) and handed on as one value."""

    sessions: Path
    queries: Path
    haystacks: Path
    item_map: Path | None = None
    query_map: Path | None = None

    @classmethod
    def of(cls, source: "StorePaths") -> "StoreFiles":
        """From a rule's declared paths (keys of ``STORE_FILES``) or the dataset folder; a missing view file is a
        clear error naming it."""
        if isinstance(source, StoreFiles):
            return source
        files = files_in(source, STORE_FILES)
        needed(files, "sessions", "queries", "haystacks")
        return cls(**files)

    def id_maps(self) -> tuple[Path, Path]:
        """The item and query maps (opaque id -> the benchmark's own), which only the harness side reads."""
        return tuple(needed({k: v for k, v in (("item_map", self.item_map), ("query_map", self.query_map)) if v},
                            "item_map", "query_map"))


StorePaths = StoreFiles | Path | Mapping[str, Any]  # the files, a rule's declared ingest files, or the dataset folder


def store_files(source: Path | str | Mapping[str, Any]) -> dict[str, Path]:
    """Where the ingest stage's files are (keys of ``STORE_FILES``): a rule's declared paths or the dataset
    folder (see :func:`membench.datasets.tables.files_in`); the ingest stage writes them."""
    return files_in(source, STORE_FILES)


class SessionStore:
    """The gold-free view of one dataset: queries, haystacks and the session logs they point at."""

    def __init__(self, source: StorePaths, user_turns_only: bool = False,
                 facts_dir: Path | None = None):
        """``source``: the paths of the session logs folder and the view tables (``sessions``, ``queries``,
        ``haystacks``), or the dataset folder."""
        files = StoreFiles.of(source)
        self.sessions_dir, queries, self.haystacks_path = files.sessions, files.queries, files.haystacks
        self.user_turns_only = user_turns_only
        self.facts_dir = Path(facts_dir) if facts_dir else None
        self.queries_table = pd.read_parquet(queries)
        hay = pd.read_parquet(self.haystacks_path).sort_values(["haystack", "position"])
        self._haystacks = {h: tuple(g["session_key"]) for h, g in hay.groupby("haystack", sort=False)}
        self._load = lru_cache(maxsize=None)(self._read_session)
        self._haystack = lru_cache(maxsize=8)(self._make_haystack)  # questions come grouped by haystack

    def queries(self, metadata: Sequence[str] = ()) -> Iterator[tuple[Query, str]]:
        """Each query (with only the declared metadata fields) and its haystack key, in benchmark order."""
        for row in self.queries_table.to_dict("records"):
            meta = {f: plain(row.get(f)) for f in metadata}
            yield Query(row["query_key"], row["text"], plain(row["date"]), meta), row["haystack"]

    def haystack(self, haystack_key: str) -> Haystack:
        """The haystack (the same object for a recently asked key, so its documents are built once)."""
        return self._haystack(haystack_key)

    def _make_haystack(self, haystack_key: str) -> Haystack:
        keys = self._haystacks.get(haystack_key)
        if keys is None:
            raise KeyError(f"no haystack {haystack_key!r} in {self.haystacks_path}")
        return Haystack(tuple(self._load(k) for k in keys), self.user_turns_only)

    def facts_path(self, key: str) -> Path | None:
        """The fact log of a session (`<facts_dir>/<key>.jsonl`), when facts were asked for."""
        return self.facts_dir / f"{key}.jsonl" if self.facts_dir else None

    def haystack_keys(self) -> list[str]:
        return list(self._haystacks)

    def session(self, session_key: str) -> Session:
        return self._load(session_key)

    def _read_session(self, key: str) -> Session:
        path = self.sessions_dir / key / "events.jsonl"
        if not path.exists():
            raise InputError(path, "session log missing (rerun the ingest rule)")
        events = read_events(path)
        facts = self.facts_path(key)
        if facts is not None and facts.exists():
            events += read_events(facts)
        return Session(key, events[0].timestamp if events else None, tuple(events))


def read_events(path: Path) -> list[Event]:
    """Parse a JSON-lines event log; a bad line is an InputError naming the file and line."""
    events = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            try:
                record = json.loads(line)
                if "about" in record:
                    record["about"] = tuple(record["about"])
                events.append(Event(**record))
            except (json.JSONDecodeError, TypeError) as err:
                raise InputError(path, f"bad event record: {err}", f"line {n}") from None
    return events


def plain(value):
    """A table cell as a plain Python value: missing (None, NA, NaN) -> None, numpy scalars unwrapped."""
    if pd.isna(value):
        return None
    return value.item() if hasattr(value, "item") else value
