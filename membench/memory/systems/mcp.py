"""Any memory server that speaks the Model Context Protocol, driven through its own add and search tools.

The server is started per store over stdio (`command`, with `{store}` in its arguments or `env` replaced by the
store's folder, so what it writes persists with membench's ledger) or reached at a streamable-HTTP `url`. Tool
names and argument names are configuration, because every server names them its own way:

    params:
      command: [python, my_server.py, --data, "{store}"]     # or url: http://127.0.0.1:8765/mcp
      add: {tool: add_memory, text: text, id: id}             # also: session, timestamp, extra: {user_id: "{store_key}"}
      search: {tool: search_memory, query: query, k: k}       # also: sessions (the scope's keys), extra
      results: {path: result, id: id, text: text, score: score}
      delete: {tool: delete_session, session: session}        # optional: lets a cut-off ingest resume
      unit: turn                                              # or session: one add per session

Each turn (or session) is added with its ref (or session key) as the id. A search result is mapped back to turns
by the id the server returns where it returns one, else by its exact text; the counts of each way, and of results
that matched nothing (dropped), are the run's `stats` and shown in the report. A server with no score gets 1/rank.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

from membench.memory.protocol import Hit, MemoryContext, MemorySystem, Scope, SessionLog
from membench.sessions.reader import read_events
from membench.sessions.view import Query, turn_text

TEXTS = "membench-mcp-texts.jsonl"  # text -> ref of everything added to this store, for results without ids


def _fill(value: Any, places: Mapping[str, str]) -> Any:
    """`{store}` / `{store_key}` replaced inside strings, lists and mappings."""
    if isinstance(value, str):
        for key, text in places.items():
            value = value.replace("{" + key + "}", text)
        return value
    if isinstance(value, list):
        return [_fill(v, places) for v in value]
    if isinstance(value, Mapping):
        return {k: _fill(v, places) for k, v in value.items()}
    return value


def _walk(data: Any, path: str | None) -> Any:
    """The value at a dotted path (`metadata.id`); None where it is missing."""
    if not path:
        return None if isinstance(data, Mapping) else data
    for part in path.split("."):
        data = data.get(part) if isinstance(data, Mapping) else None
    return data


def _put(arguments: dict[str, Any], name: str, value: Any) -> None:
    """Set an argument; a dotted name nests (`metadata.id` -> {"metadata": {"id": value}})."""
    *outer, last = name.split(".")
    for part in outer:
        arguments = arguments.setdefault(part, {})
    arguments[last] = value


def result_items(result: Any, path: str | None) -> list[dict]:
    """The result list of a tool call: its structured content at `path` (the SDK wraps a returned list as
    `{"result": [...]}`), else its text blocks read as JSON (a list, an object holding the list at `path`, or one
    object per block)."""
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        found = _walk(structured, path)
        if isinstance(found, list):
            return [item for item in found if isinstance(item, Mapping)]
    items: list[dict] = []
    for block in getattr(result, "content", None) or ():
        try:
            data = json.loads(getattr(block, "text", "") or "null")
        except json.JSONDecodeError:
            continue
        if isinstance(data, Mapping) and isinstance(_walk(data, path), list):
            data = _walk(data, path)
        items += [d for d in (data if isinstance(data, list) else [data]) if isinstance(d, Mapping)]
    return items


class McpMemorySystem(MemorySystem):
    name = "mcp"
    granularities = ("turn", "session")
    defaults: dict[str, Any] = {"command": None, "url": None, "env": {}, "unit": "turn", "share_sessions": False,
                                "add": {"tool": "add_memory", "text": "text", "id": "id"},
                                "search": {"tool": "search_memory", "query": "query", "k": "k"},
                                "results": {"path": "result", "id": "id", "text": "text", "score": "score"},
                                "delete": None, "timeout": 120}

    def __init__(self, **params: Any):
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise ValueError(f"mcp: unknown params {sorted(unknown)} (known: {', '.join(self.defaults)})")
        super().__init__(**{**self.defaults, **params})
        if bool(self.params["command"]) == bool(self.params["url"]):
            raise ValueError("mcp: give exactly one of `command` (a server started over stdio) or `url` (streamable HTTP)")
        if self.params["unit"] not in ("turn", "session"):
            raise ValueError(f"mcp: unit must be turn or session, got {self.params['unit']!r}")
        self.resolved: Counter = Counter()
        self.client = None

    @property
    def shares_sessions(self) -> bool:
        return bool(self.params["share_sessions"])

    def ingests(self) -> str:
        unit = "each turn's text (+ image caption)" if self.params["unit"] == "turn" else "each session's turns"
        server = self.params["url"] or " ".join(map(str, self.params["command"]))
        return f"{unit} through the MCP tool {self.params['add']['tool']!r} of {server}"

    # -- the server -----------------------------------------------------------------------------------------

    def open(self, context: MemoryContext) -> None:
        from anyio.from_thread import start_blocking_portal
        from mcp import StdioServerParameters
        from mcp.client.client import Client

        super().open(context)
        self.places = {"store": str(Path(context.store_dir).resolve()), "store_key": Path(context.store_dir).name}
        if self.params["command"]:
            command = _fill(list(self.params["command"]), self.places)
            env = {**os.environ, **_fill(dict(self.params["env"]), self.places)}
            target: Any = StdioServerParameters(command=command[0] if command[0] != "python" else sys.executable,
                                                args=command[1:], env=env)
        else:
            target = _fill(self.params["url"], self.places)
        self.portal_cm = start_blocking_portal()
        self.portal = self.portal_cm.__enter__()
        self.client_cm = self.portal.wrap_async_context_manager(
            Client(target, read_timeout_seconds=float(self.params["timeout"])))
        self.client = self.client_cm.__enter__()
        self.texts_path = Path(context.store_dir) / TEXTS
        self._load_texts()

    def _load_texts(self) -> None:
        """What this store was given: text -> refs (for results without ids) and ref -> its session."""
        self.by_text: dict[str, list[str]] = {}
        self.session_of: dict[str, str] = {}
        lines = self.texts_path.read_text(encoding="utf-8").splitlines() if self.texts_path.exists() else []
        for line in lines:
            self._remember(json.loads(line))

    def _remember(self, record: Mapping[str, str]) -> None:
        self.by_text.setdefault(record["text"], []).append(record["ref"])
        self.session_of[record["ref"]] = record["session"]

    def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        result = self.portal.call(self.client.call_tool, tool, arguments)
        if getattr(result, "is_error", False):
            text = " ".join(getattr(b, "text", "") for b in result.content or ())
            raise RuntimeError(f"mcp: the server's tool {tool!r} failed: {text[:500]}")
        return result

    def close(self) -> None:
        if self.client is not None:
            self.client_cm.__exit__(None, None, None)
            self.portal_cm.__exit__(None, None, None)
            self.client = None

    # -- ingest and search ---------------------------------------------------------------------------------

    def _units(self, log: SessionLog) -> list[tuple[str, str]]:
        turns = [e for e in read_events(log.path) if e.kind == "turn"]
        if self.params["unit"] == "session":
            return [(log.key, "\n".join(turn_text(e) for e in turns))]
        return [(e.ref, turn_text(e)) for e in turns]

    def ingest(self, log: SessionLog) -> None:
        spec = self.params["add"]
        with open(self.texts_path, "a", encoding="utf-8") as texts:
            for ref, text in self._units(log):
                arguments = {spec["text"]: text, **_fill(dict(spec.get("extra") or {}), self.places)}
                for field, value in (("id", ref), ("session", log.key), ("timestamp", log.timestamp)):
                    if spec.get(field):
                        _put(arguments, spec[field], value)
                self._call(spec["tool"], arguments)
                record = {"text": text, "ref": ref, "session": log.key}
                texts.write(json.dumps(record) + "\n")
                self._remember(record)

    def forget(self, session_key: str) -> None:
        spec = self.params["delete"]
        if not spec:
            super().forget(session_key)
        self._call(spec["tool"], {spec["session"]: session_key, **_fill(dict(spec.get("extra") or {}), self.places)})
        kept = [line for line in self.texts_path.read_text(encoding="utf-8").splitlines()
                if json.loads(line)["session"] != session_key] if self.texts_path.exists() else []
        self.texts_path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
        self._load_texts()

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        if k <= 0:
            return []
        spec, shape = self.params["search"], self.params["results"]
        arguments = {spec["query"]: query.text, **_fill(dict(spec.get("extra") or {}), self.places)}
        if spec.get("k"):
            _put(arguments, spec["k"], k)
        if spec.get("sessions"):
            _put(arguments, spec["sessions"], list(scope.sessions))
        in_scope = set(scope.sessions)
        hits = []
        for rank, item in enumerate(result_items(self._call(spec["tool"], arguments), shape.get("path"))[:k], 1):
            refs = self._refs(item, shape, in_scope)
            if refs:
                score = _walk(item, shape.get("score"))
                hits.append(Hit(refs, float(score) if isinstance(score, (int, float)) else 1.0 / rank,
                                str(_walk(item, shape.get("text")) or "")))
        return hits

    def _refs(self, item: Mapping[str, Any], shape: Mapping[str, Any], in_scope: set[str]) -> tuple[str, ...]:
        """The turns (or session) a result names: by the id it returns, else by its exact text; () if neither."""
        ident = _walk(item, shape.get("id"))
        if isinstance(ident, str) and self.session_of.get(ident) in in_scope:
            self.resolved["by id"] += 1
            return (ident,)
        text = _walk(item, shape.get("text"))
        found = self.by_text.get(text, []) if isinstance(text, str) else []
        refs = tuple(dict.fromkeys(r for r in found if self.session_of[r] in in_scope))
        self.resolved["by text" if refs else "unresolved"] += 1
        return refs

    def stats(self) -> dict[str, Any]:
        total = sum(self.resolved.values())
        return {"results": total, **{k: self.resolved[k] for k in ("by id", "by text", "unresolved")},
                "resolved_share": round((total - self.resolved["unresolved"]) / total, 4) if total else None}
