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
by the id the server returns where it returns one, else by its exact text, else (a memory the server rewrote) by
membench's attribution to the scope's turns (`membench.memory.attribution`, config `memory_attribution`); the counts of
each way are the run's `stats` and shown in the report. A server with no score gets 1/rank.

A server that fails is named: one that does not answer a tool call within `timeout` seconds fails the run with the
run, the server, the tool and the timeout; a stdio server that exits (run through `membench.memory.server_watch`,
which records its exit code) with its exit code and the last lines of its stderr, kept in the store's
`membench-mcp-server.log`. A rerun resumes from the ingest ledger.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

from membench.memory import server_watch
from membench.memory.protocol import Hit, MemoryContext, MemorySystem, Scope, SessionLog
from membench.sessions.reader import read_events
from membench.sessions.view import Query, turn_text

TEXTS = "membench-mcp-texts.jsonl"  # text -> ref of everything added to this store, for results without ids
SERVER_LOG, SERVER_EXIT = "membench-mcp-server.log", "membench-mcp-server.exit"  # a stdio server's stderr, exit code


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

    @classmethod
    def sealed_reads(cls, params: Mapping[str, Any]) -> list[Path]:
        """The stdio server's files, which a sealed run starts: each argument of `command` that names a file or
        folder, and the command itself (with its virtualenv, where it lives in one's bin/)."""
        command = [str(a) for a in params.get("command") or () if "{" not in str(a)]
        if not command:
            return []
        found = [Path(a).resolve() for a in command[1:] if Path(a).exists()]
        program = shutil.which(command[0]) if command[0] != "python" else None
        if program:
            program_path = Path(program).resolve()
            venv = program_path.parent.parent
            found.append(venv if (venv / "pyvenv.cfg").exists() else program_path)
        return found

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
        from mcp.client.stdio import stdio_client

        super().open(context)
        self.run_name = context.run or self.name
        self.places = {"store": str(Path(context.store_dir).resolve()), "store_key": Path(context.store_dir).name}
        self.exit_file = self.log_file = None
        if self.params["command"]:
            command = _fill(list(self.params["command"]), self.places)
            env = {**os.environ, **_fill(dict(self.params["env"]), self.places)}
            self.exit_file = Path(context.store_dir) / SERVER_EXIT
            self.exit_file.unlink(missing_ok=True)
            self.log_file = Path(context.store_dir) / SERVER_LOG
            self.errlog = open(self.log_file, "a", encoding="utf-8")
            # by its file, with -P (no script folder on sys.path): it needs only the standard library, so it
            # starts under a seal that cannot list the folder membench was found through (a project checkout)
            watched = ["-P", server_watch.__file__, str(self.exit_file),
                       command[0] if command[0] != "python" else sys.executable, *command[1:]]
            target: Any = stdio_client(StdioServerParameters(command=sys.executable, args=watched, env=env),
                                       errlog=self.errlog)
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

    def _server(self) -> str:
        return self.params["url"] or " ".join(map(str, self.params["command"]))

    def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        try:
            result = self.portal.call(self.client.call_tool, tool, arguments)
        except Exception as exc:  # noqa: BLE001 -- named below, with what the server did
            raise self._failure(tool, exc) from exc
        if getattr(result, "is_error", False):
            text = " ".join(getattr(b, "text", "") for b in result.content or ())
            raise RuntimeError(f"mcp: the server's tool {tool!r} failed: {text[:500]}")
        return result

    def _failure(self, tool: str, exc: Exception) -> RuntimeError:
        """One line that names the run, the server, the tool and what went wrong: no answer in time, or the
        server's exit code and the end of its stderr."""
        head = f"run {self.run_name!r}: the MCP server `{self._server()}`"
        code = self._exit_code(wait=0 if "timed out" in str(exc) else 2.0)
        if code is not None:
            tail = self.log_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
            return RuntimeError(f"{head} exited with code {code} during the tool call {tool!r}; the end of its stderr "
                                f"({self.log_file}): " + (" | ".join(tail) or "(empty)"))
        if "timed out" in str(exc):
            return RuntimeError(f"{head} did not answer the tool call {tool!r} within {self.params['timeout']:g} s "
                                "(params.timeout)")
        return RuntimeError(f"{head} failed the tool call {tool!r}: {type(exc).__name__}: {exc}")

    def _exit_code(self, wait: float) -> int | None:
        """The stdio server's exit code once it has ended (None while it runs, or for a server at a URL)."""
        if self.exit_file is None:
            return None
        deadline = time.monotonic() + wait
        while not self.exit_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        text = self.exit_file.read_text(encoding="utf-8").strip() if self.exit_file.exists() else ""
        return int(text) if text else None

    def close(self) -> None:
        if self.client is not None:
            self.client = None
            try:
                self.client_cm.__exit__(None, None, None)
            finally:
                self.portal_cm.__exit__(None, None, None)
                if self.log_file is not None:
                    self.errlog.close()

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
            score = _walk(item, shape.get("score"))
            hits.append(Hit(self._refs(item, shape, in_scope), float(score) if isinstance(score, (int, float))
                            else 1.0 / rank, str(_walk(item, shape.get("text")) or "")))
        return hits

    def _refs(self, item: Mapping[str, Any], shape: Mapping[str, Any], in_scope: set[str]) -> tuple[str, ...]:
        """The turns (or session) a result names: by the id it returns, else by its exact text; () if neither (the
        run then attributes its text, `membench.memory.run`)."""
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
