"""A real MCP memory server, written with the `mcp` SDK, for tests/test_memory_mcp.py.

Tools: add_memory(text, id, session), search_memory(query, k, sessions), delete_session(session). It keeps its
memories in a JSON-lines file (`--data`), so a store persists between runs, and ranks by BM25 (rank-bm25) over
lower-cased word tokens, ties by insertion order. `--no-ids` leaves ids out of its results (membench then maps
them back by text); `--rewrite` stores each memory rewritten as a note ("Noted: " + its words, lower-cased,
punctuation gone), as a system that writes its own memories would, so neither id nor text matches; `--http PORT` serves streamable HTTP on 127.0.0.1 instead of stdio. To test how membench
fails: `--hang-on-search` never answers a search; `--exit-on-search CODE` writes a line to stderr and exits
with CODE at the first search.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from rank_bm25 import BM25Okapi


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--no-ids", action="store_true")
    parser.add_argument("--rewrite", action="store_true")
    parser.add_argument("--http", type=int)
    parser.add_argument("--hang-on-search", action="store_true")
    parser.add_argument("--exit-on-search", type=int)
    args = parser.parse_args()
    data = Path(args.data)
    data.parent.mkdir(parents=True, exist_ok=True)
    memories = [json.loads(line) for line in data.read_text().splitlines()] if data.exists() else []
    server = MCPServer("membench-test-memory")
    indexes: dict = {}

    def tokens(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    def save() -> None:
        data.write_text("".join(json.dumps(m) + "\n" for m in memories))

    @server.tool()
    def add_memory(text: str, id: str, session: str = "") -> str:
        """Remember a text under an id."""
        if args.rewrite:
            text = "Noted: " + " ".join(tokens(text))
        memories.append({"id": id, "text": text, "session": session})
        with open(data, "a") as fh:
            fh.write(json.dumps(memories[-1]) + "\n")
        return "stored"

    @server.tool()
    def search_memory(query: str, k: int = 10, sessions: list[str] | None = None) -> list[dict]:
        """The k memories that best match a query (BM25), optionally only those of some sessions."""
        if args.hang_on_search:
            time.sleep(3600)
        if args.exit_on_search is not None:
            print(f"test server: giving up on the query {query!r}", file=sys.stderr, flush=True)
            os._exit(args.exit_on_search)
        key = (len(memories), None if sessions is None else tuple(sessions))
        if key not in indexes:  # one index per store state and scope, as a real server would keep
            pool = [m for m in memories if sessions is None or m["session"] in sessions]
            indexes[key] = pool, BM25Okapi([tokens(m["text"]) or [""] for m in pool]) if pool else None
        pool, index = indexes[key]
        if not pool:
            return []
        scores = index.get_scores(tokens(query))
        order = sorted(range(len(pool)), key=lambda i: (-scores[i], i))[:k]
        return [{**({} if args.no_ids else {"id": pool[i]["id"]}), "text": pool[i]["text"],
                 "score": float(scores[i])} for i in order]

    @server.tool()
    def delete_session(session: str) -> str:
        """Forget every memory of one session."""
        memories[:] = [m for m in memories if m["session"] != session]
        indexes.clear()
        save()
        return "deleted"

    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
